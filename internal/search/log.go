package search

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
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
	timings := loggedTimings{EmbedMs: ms(t.Embed), DBMs: ms(t.Statement), Degraded: pr.degraded, Replica: s.read != nil}
	if resp.Rerank != nil || pr.plan != nil {
		rr := ms(t.Rerank)
		timings.RerankMs = &rr
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
	Confidence   float64         `json:"confidence"`
	NoGoodMatch  bool            `json:"no_good_match"`
	Tenant       string          `json:"tenant"` // whose memories the search read: auth.Caller.Tenant
}

// loggedTimings is the timings column of a search_log row.
type loggedTimings struct {
	EmbedMs  float64  `json:"embed_ms"`
	DBMs     float64  `json:"db_ms"`
	RerankMs *float64 `json:"rerank_ms,omitempty"` // a planned or reranked search's
	Degraded string   `json:"degraded,omitempty"`
	Replica  bool     `json:"replica,omitempty"`
}

// loggedResult is one result in the results column of a search_log row (a struct, not a
// map: its encoding is a third of the Go cost of writing the row).
type loggedResult struct {
	Name        string   `json:"name"`
	Score       float64  `json:"score"`
	LexicalRank *int     `json:"lexical_rank"`
	VectorRank  *int     `json:"vector_rank"`
	BM25        float64  `json:"bm25"`
	NameMatch   bool     `json:"name_match"`
	Intent      *int     `json:"intent,omitempty"`
	RerankScore *float64 `json:"rerank_score,omitempty"`
	MemoryShare *float64 `json:"memory_share,omitempty"`
}

// logJSON is the results column of the search_log row of results (name, score, ranks, BM25,
// name match, and intent, rerank score and the memory branch's share (memory[i], of the
// result's row) when present) and its rerank column.
func logJSON(results []Result, memory []float64, decision *rerank.Decision) (json.RawMessage, json.RawMessage, error) {
	logged := make([]loggedResult, len(results))
	for i, res := range results {
		logged[i] = loggedResult{Name: res.Name, Score: res.Score, LexicalRank: res.LexicalRank, VectorRank: res.VectorRank,
			BM25: res.BM25, NameMatch: res.NameMatch, Intent: res.Intent, RerankScore: res.RerankScore}
		if i < len(memory) && memory[i] > 0 {
			logged[i].MemoryShare = &memory[i]
		}
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

// otherSpace reports whether err is pgvector's refusal to compare vectors of two
// dimensions: the query's embedder is not the one the stored vectors were made by.
func otherSpace(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "22000" &&
		strings.HasPrefix(pgErr.Message, "different ") && strings.Contains(pgErr.Message, " dimensions ")
}
