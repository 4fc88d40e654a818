package search

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/toolgate/toolgate/internal/db"
)

// A hot standby refuses any plan that writes, even one that would write nothing, so a
// search on a read replica cannot carry the retrieval log row in its statement. It runs
// readOnlySearchSQL instead of the Search statement: the same parameters and rows, search
// id 0, no insert. The row is then written to the primary by InsertSearchLog.
// replica_sql.go is generated from sqlc's Search statement at build time (replicagen).

//go:generate go run ./replicagen

// readOnlyStatement swaps the Search statement for its read-replica variant.
type readOnlyStatement struct {
	once sync.Once
	from string
	err  error
}

// rewrite returns readOnlySearchSQL for the Search statement sql. It fails when sql is not
// the statement replica_sql.go was generated from (make generate was not run after a
// change of sql/queries/search.sql; replicagen's test fails then too), or when asked for
// any other statement.
func (r *readOnlyStatement) rewrite(sql string) (string, error) {
	r.once.Do(func() {
		r.from = sql
		if sum := sha256.Sum256([]byte(sql)); hex.EncodeToString(sum[:]) != searchSQLSHA256 {
			r.err = errors.New("read-only search: the Search statement is not the one replica_sql.go was generated from; run make generate")
		}
	})
	if r.err != nil {
		return "", r.err
	}
	if sql != r.from {
		return "", errors.New("read-only search: asked to rewrite a statement other than Search")
	}
	return readOnlySearchSQL, nil
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
	resp := pr.response(rows[0])
	resp.SearchID = 0 // the replica's statement writes no row: the primary gives the id below
	used := s.fill(ctx, &resp, pr, rows)
	results, rerankJSON, err := logJSON(resp.Results, resp.Rerank)
	if err != nil {
		return Response{}, err
	}
	params := pr.params
	// the arm and the serving profile the replica's statement chose (its exp and pset CTEs),
	// logged as the primary's would
	var experimentID pgtype.Int8
	var arm *string // the statement's parameter is text
	if x := resp.Experiment; x != nil {
		experimentID, arm = pgtype.Int8{Int64: x.ID, Valid: true}, optional(string(x.Arm))
	}
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
		Filters: params.Filters, Profile: optional(rows[0].Profile), Format: params.Format, Plan: params.Plan,
		Rerank: rerankJSON, Results: results, LatencyMs: params.EmbedMs + dbMs, Timings: timings,
		Caller: params.Caller, CallerKeyID: params.CallerKeyID, SessionID: params.SessionID,
		ExperimentID: experimentID, Arm: arm, Endpoint: params.Endpoint,
	})
	if err != nil {
		return Response{}, fmt.Errorf("search: write the log row to the primary: %w", err)
	}
	resp.SearchID = id
	resp.Timings = Timings{Embed: pr.embed, Statement: time.Since(start)}
	if err := s.explainAsked(ctx, s.read, pr, &resp, used); err != nil {
		return Response{}, err
	}
	return resp, nil
}
