package search

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/rerank"
)

// writeLog writes the retrieval log row of an answered search to the primary, once, with
// its final ranking (merged and reranked), and sets resp.SearchID. It is the row's only
// writer (the search statement only reads); the row goes in a batch with the rows of the
// searches that finish meanwhile (logWriter), which does not wait for a WAL flush. used are
// the statement's rows of the results, in order.
func (s *Service) writeLog(ctx context.Context, pr *prepared, resp *Response, used []db.SearchRow) error {
	start := time.Now()
	memory := make([]float64, len(used))
	for i, row := range used {
		memory[i] = row.MemoryShare
	}
	results, rerankJSON, err := logJSON(resp.Results, memory, resp.Rerank)
	if err != nil {
		return err
	}
	t := resp.Timings
	timings := map[string]any{"embed_ms": ms(t.Embed), "db_ms": ms(t.Statement)}
	if resp.Rerank != nil || pr.plan != nil {
		timings["rerank_ms"] = ms(t.Rerank)
	}
	if pr.degraded != "" {
		timings["degraded"] = pr.degraded
	}
	if s.read != nil {
		timings["replica"] = true
	}
	entry := pr.log
	if entry.Timings, err = json.Marshal(timings); err != nil {
		return err
	}
	entry.Results, entry.Rerank = results, rerankJSON
	entry.LatencyMs = ms(t.Embed + t.Statement + t.Rerank)
	entry.Profile = optional(resp.Profile)
	entry.Confidence, entry.NoGoodMatch = resp.Confidence, resp.NoGoodMatch
	if x := resp.Experiment; x != nil {
		entry.ExperimentID, entry.Arm = pgtype.Int8{Int64: x.ID, Valid: true}, optional(string(x.Arm))
	}
	if resp.SearchID, err = s.logs.write(ctx, entry); err != nil {
		return err
	}
	resp.Timings.Log = time.Since(start)
	return nil
}

// logJSON is the results column of the search_log row of results (name, score, ranks, BM25,
// name match, and intent, rerank score and the memory branch's share (memory[i], of the
// result's row) when present) and its rerank column.
func logJSON(results []Result, memory []float64, decision *rerank.Decision) (json.RawMessage, json.RawMessage, error) {
	logged := make([]map[string]any, len(results))
	for i, res := range results {
		e := map[string]any{"name": res.Name, "score": res.Score, "lexical_rank": res.LexicalRank,
			"vector_rank": res.VectorRank, "bm25": res.BM25, "name_match": res.NameMatch}
		if res.Intent != nil {
			e["intent"] = *res.Intent
		}
		if res.RerankScore != nil {
			e["rerank_score"] = *res.RerankScore
		}
		if i < len(memory) && memory[i] > 0 {
			e["memory_share"] = memory[i]
		}
		logged[i] = e
	}
	out, err := json.Marshal(logged)
	if err != nil || decision == nil {
		return out, nil, err
	}
	rr, err := json.Marshal(decision)
	return out, rr, err
}

// statementError is err, the search statement's failure, as ErrStatementTimeout when the
// statement ran past its statement_timeout (SQLSTATE 57014, query_canceled, while the
// caller's context is still live: a cancelled request is not a timeout).
func statementError(ctx context.Context, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "57014" && ctx.Err() == nil {
		return errors.Join(ErrStatementTimeout, err)
	}
	return err
}
