package search

import (
	"context"
	"time"

	"github.com/toolgate/toolgate/internal/confidence"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/plan"
	"github.com/toolgate/toolgate/internal/rerank"
)

// Result is one ranked tool.
type Result struct {
	Name   string  `json:"name"`
	Source string  `json:"source"`
	Score  float64 `json:"score"`
	// Ranks in each branch (best over the query variants); nil when the branch missed it.
	LexicalRank *int `json:"lexical_rank"`
	VectorRank  *int `json:"vector_rank"`
	// BM25 is the tool's best Okapi BM25 score over the query variants (0 when the lexical
	// branch missed it).
	BM25 float64 `json:"bm25"`
	// NameMatch is true when the tool's name matched the query, which puts it first.
	NameMatch bool `json:"name_match"`
	// Intent is the plan intent whose share placed the tool (only with a plan).
	Intent *int `json:"intent,omitempty"`
	// RerankScore is the reranker's score (only for tools the reranker scored).
	RerankScore *float64 `json:"rerank_score,omitempty"`
	// Confidence is how likely the tool is one the request needs, 0 to 1, calibrated on the
	// development sets with the built-in providers (confidence.go).
	Confidence float64 `json:"confidence"`
	// Version is the tool's content hash: it changes whenever the definition does.
	Version string `json:"version"`
	// Tool is the tool's definition; its JSON is in the request's format.
	Tool Tool `json:"tool"`
	// Explanation says why the tool has its score (only when the request asked to explain).
	Explanation *Explanation `json:"explanation,omitempty"`
}

// Response is the answer to a Request.
type Response struct {
	SearchID int64    `json:"search_id"`
	Mode     Mode     `json:"mode"`
	Format   Format   `json:"format"`
	Results  []Result `json:"results"`
	// Confidence is how likely the first result is a tool the request needs, 0 to 1 (0 with
	// no result); NoGoodMatch is true when it is below ConfidenceThreshold: the list is a
	// guess, not an answer (confidence.go).
	Confidence  float64 `json:"confidence"`
	NoGoodMatch bool    `json:"no_good_match"`
	// ConfidenceInputs are what the confidence models were given (for refitting them; not
	// part of the answer).
	ConfidenceInputs confidence.Inputs `json:"-"`
	// Plan and Rerank are what the planner and the reranker did (absent when not asked for).
	Plan   *plan.Plan       `json:"plan,omitempty"`
	Rerank *rerank.Decision `json:"rerank,omitempty"`
	// Degraded says why a branch was skipped: a hybrid search whose query could not be
	// embedded ran its lexical branch only. Absent when both branches ran.
	Degraded string `json:"degraded,omitempty"`
	// Experiment is the A/B experiment arm that served the search (docs/experiments.md):
	// absent when the search is in no experiment.
	Experiment *ExperimentArm `json:"experiment,omitempty"`
	// Explain is how the ranking was made (only when the request asked to explain).
	Explain *Explain `json:"explain,omitempty"`
	// ExplainedTools answer the request's explain_tools, in its order (absent when it named none).
	ExplainedTools []ToolExplanation `json:"explained_tools,omitempty"`
	// Profile is the weight profile that served the search: the requested one, the
	// experiment arm's, or the active one (for metrics; the answer says it only in Explain).
	Profile string `json:"-"`
	// Timings are where the search's time went, for metrics (not part of the answer).
	Timings Timings `json:"-"`
}

// ExperimentArm is the arm of the running A/B experiment between weight profiles that
// served a search: its vectors came from Profile's current set.
type ExperimentArm struct {
	ID      int64            `json:"id"`
	Arm     db.ExperimentArm `json:"arm"`
	Profile string           `json:"profile"`
}

// Timings of one search. Embed is zero when no query was embedded.
type Timings struct {
	Embed     time.Duration // embedding the query (the vector branch's own cost)
	Statement time.Duration // the search statement, its round trip included
	Rerank    time.Duration // merging a plan's rankings and reranking (no connection held)
	Log       time.Duration // writing the retrieval log row, its round trip included
}

// fill adds the results of rows to resp: as the statement ranked them, or, with a plan or a
// reranker, the per-intent rankings merged by plan.Merge and reranked (mergeRerank), with
// each result's intent and rerank score and the rerank decision. It returns the rows of the
// results, in their order.
func (s *Service) fill(ctx context.Context, resp *Response, pr *prepared, rows []db.SearchRow) []db.SearchRow {
	if !pr.merges() {
		return appendRows(resp, pr.req.Format, rows)
	}
	final, decision := s.mergeRerank(ctx, pr, rows)
	used := appendRows(resp, pr.req.Format, final.rows)
	for i := range resp.Results {
		res := &resp.Results[i]
		if pr.plan != nil {
			res.Intent = &final.intents[i]
		}
		if sc, ok := final.scores[res.Name]; ok {
			res.RerankScore = &sc
		}
	}
	resp.Rerank = decision
	return used
}

// appendRows adds the tools of rows (in order) to resp and returns their rows.
func appendRows(resp *Response, format Format, rows []db.SearchRow) []db.SearchRow {
	used := rows[:0:0]
	for _, row := range rows {
		if row.Name == nil {
			continue // the single row of an empty result
		}
		used = append(used, row)
		resp.Results = append(resp.Results, Result{
			Name: *row.Name, Source: deref(row.Source), Score: row.Score,
			LexicalRank: rank(row.LexicalRank), VectorRank: rank(row.VectorRank),
			BM25: row.Bm25, NameMatch: row.NameMatch > 0, Version: deref(row.ContentHash), Tool: toolOf(format, row),
		})
	}
	return used
}

func rank(r int32) *int {
	if r <= 0 {
		return nil
	}
	v := int(r)
	return &v
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
