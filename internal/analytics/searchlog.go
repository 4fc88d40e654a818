package analytics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/derrors"
)

// LaterSearches is how many of its session's later searches a search shows.
const LaterSearches = 20

// SearchNotFoundError is a search id the log does not hold (never logged, or its
// partition dropped by retention).
type SearchNotFoundError struct{ ID int64 }

func (e *SearchNotFoundError) Error() string        { return fmt.Sprintf("search %d not found", e.ID) }
func (e *SearchNotFoundError) Is(target error) bool { return target == derrors.NotFound }

// LoggedSearch is one search of the log as a list shows it: where it came from, what it
// found, and its labels (the tools the agent then called or reported).
type LoggedSearch struct {
	ID          int64     `json:"id"`
	CreatedAt   time.Time `json:"created_at"`
	Query       string    `json:"query"`
	Endpoint    string    `json:"endpoint"`
	Mode        string    `json:"mode"`
	Profile     string    `json:"profile"`
	ResultCount int32     `json:"result_count"`
	TopScore    *float64  `json:"top_score"`
	LatencyMs   *float64  `json:"latency_ms"`
	SessionID   *string   `json:"session_id"`
	Caller      *string   `json:"caller"`
	Labels      int64     `json:"labels"`
	// BestRank is the rank of the best-ranked labelled tool; nil when unlabelled.
	BestRank *int32 `json:"best_rank"`
}

// RecentSearches returns the searches of the last p.Days days, newest first, at most
// p.Limit: those of query when it is not "" (the exact text, as the analytics group it),
// else all.
func RecentSearches(ctx context.Context, pool *pgxpool.Pool, query string, p Params) ([]LoggedSearch, error) {
	var q *string
	if query != "" {
		q = &query
	}
	out := []LoggedSearch{}
	err := read(ctx, pool, func(dq *db.Queries) error {
		rows, err := dq.RecentSearches(ctx, db.RecentSearchesParams{Days: int32(p.Days), Query: q, MaxRows: int32(p.Limit)})
		for _, r := range rows {
			s := LoggedSearch{ID: r.ID, CreatedAt: r.CreatedAt.UTC(), Query: r.Query, Endpoint: r.Endpoint, Mode: r.Mode,
				Profile: r.Profile, ResultCount: r.ResultCount, TopScore: nullFloat(r.TopScore), LatencyMs: nullFloat(r.LatencyMs),
				SessionID: r.SessionID, Caller: r.Caller, Labels: r.Labels}
			if r.BestRank > 0 {
				s.BestRank = &r.BestRank
			}
			out = append(out, s)
		}
		return err
	})
	return out, err
}

// Label is a tool the agent called (an MCP call_tool after find_tools) or reported
// (POST /search/{id}/feedback) after a search, with its rank in the search and its outcome.
type Label struct {
	Tool    string    `json:"tool"`
	Source  string    `json:"source"`
	Rank    int32     `json:"rank"`
	DelayMs int64     `json:"delay_ms"`
	Success *bool     `json:"success"`
	At      time.Time `json:"at"`
}

// SessionSearch is a later search of the same session and caller, with the tools labelled
// after it.
type SessionSearch struct {
	ID          int64     `json:"id"`
	CreatedAt   time.Time `json:"created_at"`
	Query       string    `json:"query"`
	Endpoint    string    `json:"endpoint"`
	ResultCount int32     `json:"result_count"`
	Labelled    []string  `json:"labelled"`
}

// SearchDetail is one search of the log: the request as logged, the results as returned
// (search_log.results: name, score, ranks, BM25, name match), its labels, and the
// searches its session made next (up to LaterSearches).
type SearchDetail struct {
	ID          int64             `json:"id"`
	CreatedAt   time.Time         `json:"created_at"`
	Query       string            `json:"query"`
	Variants    []string          `json:"variants"`
	Endpoint    string            `json:"endpoint"`
	Mode        string            `json:"mode"`
	K           int32             `json:"k"`
	Filters     json.RawMessage   `json:"filters"`
	Profile     string            `json:"profile"`
	Plan        json.RawMessage   `json:"plan"`
	Rerank      json.RawMessage   `json:"rerank"`
	Results     json.RawMessage   `json:"results"`
	ResultCount int32             `json:"result_count"`
	TopScore    *float64          `json:"top_score"`
	LatencyMs   *float64          `json:"latency_ms"`
	Caller      *string           `json:"caller"`
	SessionID   *string           `json:"session_id"`
	Experiment  string            `json:"experiment,omitempty"`
	Arm         *db.ExperimentArm `json:"arm,omitempty"`
	Labels      []Label           `json:"labels"`
	Later       []SessionSearch   `json:"later"`
}

// Search returns the logged search id (a *SearchNotFoundError when the log has none).
func Search(ctx context.Context, pool *pgxpool.Pool, id int64) (SearchDetail, error) {
	var d SearchDetail
	err := read(ctx, pool, func(q *db.Queries) error {
		r, err := q.GetSearchLogEntry(ctx, id)
		if errors.Is(err, pgx.ErrNoRows) {
			return &SearchNotFoundError{ID: id}
		}
		if err != nil {
			return err
		}
		d = SearchDetail{ID: r.ID, CreatedAt: r.CreatedAt.UTC(), Query: r.Query, Variants: r.Variants, Endpoint: r.Endpoint,
			Mode: r.Mode, K: r.K, Filters: r.Filters, Profile: r.Profile, Plan: r.Plan, Rerank: r.Rerank, Results: r.Results,
			ResultCount: r.ResultCount, TopScore: nullFloat(r.TopScore), LatencyMs: nullFloat(r.LatencyMs), Caller: r.Caller,
			SessionID: r.SessionID, Experiment: r.Experiment, Arm: r.Arm, Labels: []Label{}, Later: []SessionSearch{}}
		labels, err := q.SearchLabelsOf(ctx, db.SearchLabelsOfParams{SearchID: r.ID, SearchCreatedAt: r.CreatedAt})
		if err != nil {
			return err
		}
		for _, l := range labels {
			lb := Label{Tool: l.ToolName, Source: string(l.LabelSource), Rank: l.Rank, DelayMs: l.DelayMs, At: l.CreatedAt.UTC()}
			if l.Success.Valid {
				lb.Success = &l.Success.Bool
			}
			d.Labels = append(d.Labels, lb)
		}
		if r.SessionID == nil {
			return nil
		}
		later, err := q.LaterSearchesOfSession(ctx, db.LaterSearchesOfSessionParams{SessionID: *r.SessionID, Caller: r.Caller,
			AfterCreatedAt: r.CreatedAt, AfterID: r.ID, MaxRows: LaterSearches})
		for _, s := range later {
			d.Later = append(d.Later, SessionSearch{ID: s.ID, CreatedAt: s.CreatedAt.UTC(), Query: s.Query, Endpoint: s.Endpoint,
				ResultCount: s.ResultCount, Labelled: s.LabelledTools})
		}
		return err
	})
	return d, err
}

func nullFloat(f pgtype.Float8) *float64 {
	if !f.Valid {
		return nil
	}
	return &f.Float64
}
