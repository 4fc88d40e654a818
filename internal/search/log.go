package search

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/toolgate/toolgate/internal/rerank"
)

// writeLog writes the retrieval log row of an answered search to the primary, once, with
// its final ranking (merged and reranked), and sets resp.SearchID. It is the row's only
// writer (the search statement only reads); the row goes in a batch with the rows of the
// searches that finish meanwhile (logWriter), which does not wait for a WAL flush.
func (s *Service) writeLog(ctx context.Context, pr *prepared, resp *Response) error {
	start := time.Now()
	results, rerankJSON, err := logJSON(resp.Results, resp.Rerank)
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
	if x := resp.Experiment; x != nil {
		entry.ExperimentID, entry.Arm = pgtype.Int8{Int64: x.ID, Valid: true}, optional(string(x.Arm))
	}
	if resp.SearchID, err = s.logs.write(ctx, entry); err != nil {
		return err
	}
	resp.Timings.Log = time.Since(start)
	return nil
}

// logRow is a search's retrieval-log row, one element of InsertSearchLogs' batch: its JSON
// keys are search_log's column names (result_count and top_score are derived from results
// by the statement).
type logRow struct {
	Query        string          `json:"query"`
	Variants     []string        `json:"variants"`
	Mode         string          `json:"mode"`
	K            int32           `json:"k"`
	Filters      json.RawMessage `json:"filters"`
	Profile      *string         `json:"profile"`
	Format       string          `json:"format"`
	Plan         json.RawMessage `json:"plan"`
	Rerank       json.RawMessage `json:"rerank"`
	Results      json.RawMessage `json:"results"`
	LatencyMs    float64         `json:"latency_ms"`
	Timings      json.RawMessage `json:"timings"`
	Caller       *string         `json:"caller"`
	CallerKeyID  pgtype.Int8     `json:"caller_key_id"`
	SessionID    *string         `json:"session_id"`
	ExperimentID pgtype.Int8     `json:"experiment_id"`
	Arm          *string         `json:"arm"`
	Endpoint     string          `json:"endpoint"`
}

// logJSON is the results column of the search_log row of results (name, score, ranks, BM25,
// name match, and intent and rerank score when present) and its rerank column.
func logJSON(results []Result, decision *rerank.Decision) (json.RawMessage, json.RawMessage, error) {
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
