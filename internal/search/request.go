package search

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/pgtext"
	"github.com/toolgate/toolgate/internal/plan"
)

// Request is one search.
type Request struct {
	Query   string   `json:"query"`
	Queries []string `json:"queries,omitempty"` // extra query variants, fused with Query
	// K is how many tools to return, 1 to MaxK; 0 means DefaultK. Over JSON an absent "k"
	// means DefaultK and an explicit 0 is out of range (UnmarshalJSON).
	K         int      `json:"k,omitempty"`
	Mode      Mode     `json:"mode,omitempty"`
	Sources   []string `json:"sources,omitempty"`
	Tags      []string `json:"tags,omitempty"`
	Profile   string   `json:"profile,omitempty"`
	Format    Format   `json:"format,omitempty"`
	SessionID string   `json:"session_id,omitempty"`
	// CallID is the vendor's id of the tool search call being answered (OpenAI's call_id,
	// Anthropic's tool_use id), echoed in the answer of the formats openai_tool_search and
	// anthropic_tool_reference; not allowed with the others.
	CallID string `json:"call_id,omitempty"`
	// Plan is the query planning asked for: none (default), rewrite, decompose or full.
	Plan plan.Mode `json:"plan,omitempty"`
	// Rerank asks for reranking; nil means yes when a reranker is configured.
	Rerank *bool `json:"rerank,omitempty"`
	// Explain asks why each result ranked where it did (Result.Explanation, Response.Explain):
	// one more statement, over the returned tools only, after the search.
	Explain bool `json:"explain,omitempty"`
	// ExplainTools names tools (at most MaxExplainTools) to explain whether or not the search
	// returns them: "why not this tool?" (Response.ExplainedTools, docs/explain.md#why-not).
	ExplainTools []string `json:"explain_tools,omitempty"`
	// Endpoint is where the search came from, for the retrieval log; empty means internal.
	Endpoint Endpoint `json:"-"`
}

// UnmarshalJSON reads a request body strictly (an unknown field is an error) and tells an
// absent "k", which means DefaultK, from an explicit 0, which is out of range like any other
// k below 1.
func (r *Request) UnmarshalJSON(b []byte) error {
	type fields Request // the same fields without this method
	var w struct {
		*fields
		K *int `json:"k"` // shadows fields.K: a pointer tells absent from 0
	}
	w.fields = (*fields)(r)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return err
	}
	if w.K != nil {
		if *w.K == 0 {
			return kOutOfRange(0)
		}
		r.K = *w.K
	}
	return nil
}

func kOutOfRange(k int) error {
	return &InvalidRequestError{Field: "k", Reason: fmt.Sprintf("%d is out of range 1..%d", k, MaxK)}
}

// checkText fails when s cannot be PostgreSQL text: the statement would fail on it.
func checkText(field, s string) error {
	if p := pgtext.Problem(s); p != "" {
		return &InvalidRequestError{Field: field, Reason: p}
	}
	return nil
}

// normalize validates r and fills in its defaults.
func normalize(r Request) (Request, error) {
	for _, f := range [...]struct{ name, value string }{{"query", r.Query}, {"mode", string(r.Mode)},
		{"format", string(r.Format)}, {"plan", string(r.Plan)}, {"profile", r.Profile}, {"session_id", r.SessionID}, {"call_id", r.CallID}} {
		if err := checkText(f.name, f.value); err != nil {
			return r, err
		}
	}
	r.Query = strings.TrimSpace(r.Query)
	if r.Query == "" {
		return r, &InvalidRequestError{Field: "query", Reason: "must not be empty"}
	}
	if n := utf8.RuneCountInString(r.Query); n > MaxQueryChars {
		return r, &InvalidRequestError{Field: "query", Reason: fmt.Sprintf("%d characters, at most %d allowed", n, MaxQueryChars)}
	}
	if len(r.Queries) > MaxVariants {
		return r, &InvalidRequestError{Field: "queries", Reason: fmt.Sprintf("%d variants, at most %d allowed", len(r.Queries), MaxVariants)}
	}
	variants := make([]string, 0, len(r.Queries))
	for i, q := range r.Queries {
		if err := checkText(fmt.Sprintf("queries[%d]", i), q); err != nil {
			return r, err
		}
		q = strings.TrimSpace(q)
		if q == "" {
			return r, &InvalidRequestError{Field: fmt.Sprintf("queries[%d]", i), Reason: "must not be empty"}
		}
		if n := utf8.RuneCountInString(q); n > MaxQueryChars {
			return r, &InvalidRequestError{Field: fmt.Sprintf("queries[%d]", i), Reason: fmt.Sprintf("%d characters, at most %d allowed", n, MaxQueryChars)}
		}
		variants = append(variants, q)
	}
	r.Queries = variants
	if r.K == 0 {
		r.K = DefaultK
	}
	mode, err := plan.ParseMode(string(r.Plan))
	if err != nil {
		return r, &InvalidRequestError{Field: "plan", Reason: fmt.Sprintf("%q is not none, rewrite, decompose or full", r.Plan)}
	}
	r.Plan = mode
	if mode != plan.ModeNone && len(r.Queries) > 0 {
		return r, &InvalidRequestError{Field: "queries", Reason: "not allowed with a plan: the planner makes the variants"}
	}
	if r.K < 1 || r.K > MaxK {
		return r, kOutOfRange(r.K)
	}
	switch r.Mode {
	case "":
		r.Mode = ModeHybrid
	case ModeHybrid, ModeLexical, ModeVector:
	default:
		return r, &InvalidRequestError{Field: "mode", Reason: fmt.Sprintf("%q is not hybrid, lexical or vector", r.Mode)}
	}
	switch r.Format {
	case "":
		r.Format = FormatOpenAI
	case FormatOpenAI, FormatAnthropic, FormatMCP, FormatRaw:
		if r.CallID != "" {
			return r, &InvalidRequestError{Field: "call_id", Reason: "only with format openai_tool_search or anthropic_tool_reference"}
		}
	case FormatAnthropicToolReference:
		if r.CallID == "" {
			return r, &InvalidRequestError{Field: "call_id", Reason: "required with format anthropic_tool_reference: the id of the tool_use block answered"}
		}
	case FormatOpenAIToolSearch:
	default:
		return r, &InvalidRequestError{Field: "format", Reason: fmt.Sprintf(
			"%q is not openai, anthropic, mcp, raw, openai_tool_search or anthropic_tool_reference", r.Format)}
	}
	if utf8.RuneCountInString(r.CallID) > maxName {
		return r, &InvalidRequestError{Field: "call_id", Reason: fmt.Sprintf("at most %d characters", maxName)}
	}
	if r.Sources, err = cleanList("sources", r.Sources, false); err != nil {
		return r, err
	}
	if r.Tags, err = cleanList("tags", r.Tags, true); err != nil {
		return r, err
	}
	if len(r.ExplainTools) > MaxExplainTools {
		return r, &InvalidRequestError{Field: "explain_tools", Reason: fmt.Sprintf("%d tools, at most %d allowed", len(r.ExplainTools), MaxExplainTools)}
	}
	if r.ExplainTools, err = cleanList("explain_tools", r.ExplainTools, false); err != nil {
		return r, err
	}
	r.Profile = strings.TrimSpace(r.Profile)
	if utf8.RuneCountInString(r.Profile) > maxName {
		return r, &InvalidRequestError{Field: "profile", Reason: fmt.Sprintf("at most %d characters", maxName)}
	}
	if utf8.RuneCountInString(r.SessionID) > maxName {
		return r, &InvalidRequestError{Field: "session_id", Reason: fmt.Sprintf("at most %d characters", maxName)}
	}
	return r, nil
}

func cleanList(field string, in []string, lower bool) ([]string, error) {
	if len(in) == 0 {
		return nil, nil
	}
	if len(in) > maxFilter {
		return nil, &InvalidRequestError{Field: field, Reason: fmt.Sprintf("at most %d entries", maxFilter)}
	}
	out := make([]string, 0, len(in))
	for i, s := range in {
		if err := checkText(fmt.Sprintf("%s[%d]", field, i), s); err != nil {
			return nil, err
		}
		s = strings.TrimSpace(s)
		if lower {
			s = strings.ToLower(s)
		}
		if s == "" {
			return nil, &InvalidRequestError{Field: field, Reason: "entries must not be empty"}
		}
		if utf8.RuneCountInString(s) > maxName {
			return nil, &InvalidRequestError{Field: fmt.Sprintf("%s[%d]", field, i), Reason: fmt.Sprintf("at most %d characters", maxName)}
		}
		out = append(out, s)
	}
	return out, nil
}

// checkNames rejects unknown profiles and sources the caller cannot see (without telling
// apart a missing source from a hidden one).
func (s *Service) checkNames(ctx context.Context, q *db.Queries, r Request, allowed []string) error {
	if r.Profile != "" {
		ok, err := q.SearchProfileExists(ctx, r.Profile)
		if err != nil {
			return fmt.Errorf("check profile: %w", err)
		}
		if !ok {
			return &UnknownError{Kind: "profile", Names: []string{r.Profile}}
		}
	}
	if len(r.Sources) > 0 {
		known, err := q.SearchKnownSources(ctx, db.SearchKnownSourcesParams{Names: r.Sources, Allowed: allowed})
		if err != nil {
			return fmt.Errorf("check sources: %w", err)
		}
		seen := make(map[string]bool, len(known))
		for _, k := range known {
			seen[k] = true
		}
		var missing []string
		for _, n := range r.Sources {
			if !seen[n] {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			return &UnknownError{Kind: "source", Names: missing}
		}
	}
	return nil
}
