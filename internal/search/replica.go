package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/db"
)

// A hot standby refuses any plan that writes, even one that would write nothing, so a
// search on a read replica cannot carry the retrieval log row in its statement. It runs the
// Search statement with the log CTE's INSERT INTO search_log (...) SELECT ... RETURNING id
// turned into SELECT 0 AS id FROM (SELECT ...) logged: the same parameters (every one still
// referenced, so the prepared statement's types are the same), the same rows, search id 0.
// The row is then written to the primary by InsertSearchLog.
var (
	logInsertHead = regexp.MustCompile(`INSERT INTO search_log \([^)]*\)\s*SELECT `)
	logInsertTail = regexp.MustCompile(`\s*RETURNING id\s*\)`)
)

// readOnlySearch is the read-replica variant of the Search statement sql.
func readOnlySearch(sql string) (string, error) {
	if n := len(logInsertHead.FindAllStringIndex(sql, -1)); n != 1 {
		return "", fmt.Errorf("read-only search: want one INSERT INTO search_log in the Search statement, found %d", n)
	}
	if n := len(logInsertTail.FindAllStringIndex(sql, -1)); n != 1 {
		return "", fmt.Errorf("read-only search: want one RETURNING id in the Search statement, found %d", n)
	}
	sql = logInsertHead.ReplaceAllLiteralString(sql, "SELECT 0::bigint AS id FROM (SELECT ")
	return logInsertTail.ReplaceAllLiteralString(sql, "\n    ) logged\n)"), nil
}

// readOnlyStatement derives the read-only statement once per Service.
type readOnlyStatement struct {
	once     sync.Once
	from, to string
	err      error
}

// rewrite is readOnlySearch(sql), computed once: sql is always the Search statement.
func (r *readOnlyStatement) rewrite(sql string) (string, error) {
	r.once.Do(func() { r.from = sql; r.to, r.err = readOnlySearch(sql) })
	if sql != r.from {
		return "", errors.New("read-only search: asked to rewrite a statement other than Search")
	}
	return r.to, r.err
}

// searchReplica runs the search on the read replica and writes its log row to the primary.
// A tool changed on the primary shows in results once the replica has replayed the change
// (its replication lag).
func (s *Service) searchReplica(ctx context.Context, pr *prepared) (Response, error) {
	start := time.Now()
	rows, err := s.run(ctx, s.read, s.readSQL.rewrite, pr)
	if err != nil {
		return Response{}, fmt.Errorf("search on the read replica: %w", err)
	}
	dbMs := ms(time.Since(start))
	resp := pr.response(0)
	if err := s.fill(ctx, &resp, pr, rows); err != nil {
		return Response{}, fmt.Errorf("search: %w", err)
	}
	results, rerankJSON, err := logJSON(resp.Results, resp.Rerank)
	if err != nil {
		return Response{}, err
	}
	params := pr.params
	t := map[string]any{"embed_ms": params.EmbedMs, "db_ms": dbMs, "replica": true}
	if pr.degraded != "" {
		t["degraded"] = pr.degraded
	}
	timings, err := json.Marshal(t)
	if err != nil {
		return Response{}, err
	}
	qp := db.New(newPipeline(s.pool))
	if err := qp.SearchLogAsync(ctx); err != nil {
		return Response{}, err
	}
	id, err := qp.InsertSearchLog(ctx, db.InsertSearchLogParams{
		Query: params.Query, Variants: params.Variants, Mode: params.Mode, K: params.K,
		Filters: params.Filters, Profile: params.Profile, Format: params.Format, Plan: params.Plan,
		Rerank: rerankJSON, Results: results, LatencyMs: params.EmbedMs + dbMs, Timings: timings,
		Caller: params.Caller, CallerKeyID: params.CallerKeyID, SessionID: params.SessionID,
	})
	if err != nil {
		return Response{}, fmt.Errorf("search: write the log row to the primary: %w", err)
	}
	resp.SearchID = id
	resp.Timings = Timings{Embed: pr.embed, Statement: time.Since(start)}
	return resp, nil
}
