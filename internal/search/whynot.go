package search

import (
	"context"
	"fmt"

	"github.com/toolgate/toolgate/internal/db"
)

// MaxExplainTools is how many tools one request may name in explain_tools.
const MaxExplainTools = 10

// whyNotDepth is the per-intent depth of the ranking a why-not answer reads its ranks from:
// deeper than any fused list can be, so that every candidate of the search has its position.
const whyNotDepth = 100000

// ToolExplanation answers "why not this tool?" for one name of a request's explain_tools
// (docs/explain.md#why-not): where the search ranked the tool, what each branch scored it,
// and why it was not returned.
type ToolExplanation struct {
	Name string `json:"name"`
	// Returned is true when the tool is among the results.
	Returned bool `json:"returned"`
	// Rank is the tool's position: among the results when returned, else in the statement's
	// fused ranking (with a plan, in the ranking of Intent, the intent where it ranked best);
	// nil when no branch's candidates held it.
	Rank   *int `json:"rank"`
	Intent *int `json:"intent,omitempty"`
	// Score is the fused score at that rank (nil with no rank).
	Score *float64 `json:"score"`
	// Reasons say why the tool was not returned, or what kept a branch from scoring it;
	// empty for a returned tool every branch could score.
	Reasons []Reason `json:"reasons"`
	// Explanation is each branch's part, as a result's, with every text scored (a branch
	// whose candidates did not hold the tool shows its BM25 or similarity with rank 0 or
	// nil and no share); nil for a tool the search could not return at all.
	Explanation *Explanation `json:"explanation"`
}

// Reason is one cause of a why-not answer: a stable code and a sentence for people.
type Reason struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// The codes of Reason.
const (
	// ReasonNotFound: no tool of this name in a source the caller may search (a tool of
	// another source reads exactly like a name no tool has).
	ReasonNotFound       = "not_found"
	ReasonDisabled       = "disabled"
	ReasonHeldForReview  = "held_for_review"
	ReasonNotInSources   = "not_in_requested_sources"
	ReasonFilteredByTags = "filtered_by_tags"
	ReasonNotIndexed     = "not_indexed"
	ReasonNoVector       = "no_vector"
	ReasonNotMatched     = "not_matched"
	ReasonBelowK         = "below_k"
	// ReasonHiddenByRule: a curation rule hides the tool from this query (docs/curations.md).
	ReasonHiddenByRule = "hidden_by_rule"
)

// whyNot answers the request's explain_tools into resp.ExplainedTools. used are the rows of
// the results in order, first the statement's first row (the vector set of the search). A
// tool not returned gets its rank from the Search statement run again with the same
// parameters and a ranking deep enough to hold every candidate (the ranks are the
// statement's own), and its explanation from SearchExplain over every text.
func (s *Service) whyNot(ctx context.Context, to batcher, pr *prepared, resp *Response, first db.SearchRow, used []db.SearchRow) error {
	names := pr.req.ExplainTools
	status, err := db.New(newPipeline(to)).SearchToolStatus(ctx, db.SearchToolStatusParams{
		Names: names, Allowed: pr.params.Allowed, Sources: pr.params.Sources, Tags: pr.params.Tags, VectorSet: first.VectorSet,
		Query: pr.params.Query, Tenant: pr.params.Tenant})
	if err != nil {
		return fmt.Errorf("why not: %w", err)
	}
	byName := make(map[string]db.SearchToolStatusRow, len(status))
	for _, st := range status {
		byName[st.Name] = st
	}
	returned := make(map[string]int, len(used)) // name → index in used
	for i, row := range used {
		returned[*row.Name] = i
	}
	out := make([]ToolExplanation, len(names))
	var explainRows []db.SearchRow
	var explainOf []int // the index in out of each row of explainRows
	var deep map[string]db.SearchRow
	for i, name := range names {
		te := ToolExplanation{Name: name, Reasons: []Reason{}}
		st, ok := byName[name]
		if reasons := unsearchable(st, ok); len(reasons) > 0 {
			te.Reasons = reasons
			out[i] = te
			continue
		}
		if len(pr.params.Vecs) > 0 && !st.HasVector {
			te.Reasons = append(te.Reasons, Reason{ReasonNoVector, fmt.Sprintf("the vector set of profile %q holds no vector of it (not enriched yet): the vector branch cannot find it", resp.Profile)})
		}
		var row db.SearchRow
		if j, ok := returned[name]; ok {
			row = used[j]
			te.Returned, te.Rank = true, ptr(j+1)
		} else {
			if deep == nil {
				if deep, err = s.deepRanking(ctx, to, pr); err != nil {
					return err
				}
			}
			if r, ok := deep[name]; ok {
				row = r
				te.Rank = ptr(int(r.Pos))
				te.Reasons = append(te.Reasons, Reason{ReasonBelowK, fmt.Sprintf("ranked %d; the search returned %d", r.Pos, len(used))})
			} else {
				row = db.SearchRow{Name: &name, VectorSet: first.VectorSet}
				te.Reasons = append(te.Reasons, Reason{ReasonNotMatched, "no branch's candidates held it: its words and its vector were not among the best matches of any text of the search"})
			}
		}
		if te.Rank != nil {
			te.Score = &row.Score
			if pr.plan != nil {
				te.Intent = ptr(int(row.Grp) - 1)
			}
		}
		row.VectorSet = first.VectorSet
		out[i] = te
		explainRows, explainOf = append(explainRows, row), append(explainOf, i)
	}
	if len(explainRows) > 0 {
		explained, _, err := s.explanations(ctx, to, pr, explainRows, true)
		if err != nil {
			return fmt.Errorf("why not: %w", err)
		}
		for j, e := range explained {
			out[explainOf[j]].Explanation = e
		}
	}
	resp.ExplainedTools = out
	return nil
}

// unsearchable are the reasons the search could not return a tool at all: none for a
// searchable tool the request's filters keep. ok is false when the caller may see no tool
// of that name.
func unsearchable(st db.SearchToolStatusRow, ok bool) []Reason {
	var out []Reason
	switch {
	case !ok:
		return []Reason{{ReasonNotFound, "no tool of this name in the sources this caller may search"}}
	case !st.Enabled:
		out = append(out, Reason{ReasonDisabled, "the tool is disabled: search never returns it"})
	case st.ReviewState != db.ReviewApproved:
		out = append(out, Reason{ReasonHeldForReview, "a changed definition is held for review: search returns the tool once it is approved"})
	case !st.Indexed:
		out = append(out, Reason{ReasonNotIndexed, "the search index does not hold the tool yet (it is indexed moments after a change)"})
	}
	if !st.InSources {
		out = append(out, Reason{ReasonNotInSources, "its source is not among the request's sources"})
	}
	if !st.TagsMatch {
		out = append(out, Reason{ReasonFilteredByTags, "it has none of the request's tags"})
	}
	if st.HiddenBy != 0 {
		out = append(out, Reason{ReasonHiddenByRule, fmt.Sprintf("curation rule %d hides it from this query", st.HiddenBy)})
	}
	return out
}

// deepRanking runs the Search statement again with pr's parameters, but for the depth of
// its per-intent rankings, and returns each tool's best-placed row.
func (s *Service) deepRanking(ctx context.Context, to batcher, pr *prepared) (map[string]db.SearchRow, error) {
	again := *pr
	again.params.PerGroup = whyNotDepth
	rows, err := s.run(ctx, to, &again)
	if err != nil {
		return nil, fmt.Errorf("why not: rank: %w", statementError(ctx, err))
	}
	best := make(map[string]db.SearchRow, len(rows))
	for _, row := range rows {
		if row.Name == nil {
			continue
		}
		if prev, ok := best[*row.Name]; !ok || row.Pos < prev.Pos {
			best[*row.Name] = row
		}
	}
	return best, nil
}

func ptr[T any](v T) *T { return &v }
