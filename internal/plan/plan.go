// Package plan turns a search query into a plan: a rewritten query and its independent
// sub-intents, each with a few variants (Toolshed's intra-retrieval modules: rewriting,
// decomposition, multi-query expansion; seed 001 section 3.4.2 and appendix C fig. 18).
// It also merges the per-intent rankings into one list where every intent gets its share
// of k (Merge).
//
// The search runs, for each intent, its Query and Variants fused (the search's fusion) in one
// statement, then calls Merge on the per-intent rankings, then reranks (package rerank).
package plan

import (
	"context"
	"fmt"
)

// Mode is how much planning a request asks for.
type Mode string

const (
	ModeNone      Mode = "none"      // the query as given, one intent
	ModeRewrite   Mode = "rewrite"   // fix spelling and shorthand, one intent
	ModeDecompose Mode = "decompose" // split into independent sub-intents, no rewriting
	ModeFull      Mode = "full"      // rewrite, decompose, and expand each intent into variants
)

// Planner names, as stored in Plan.Planner and accepted by TOOLGATE_PLANNER.
const (
	NameHeuristic = "heuristic"
	NameLLM       = "llm"
)

// ModeError is a plan mode that does not exist.
type ModeError struct{ Mode string }

func (e *ModeError) Error() string {
	return fmt.Sprintf("unknown plan mode %q: want none, rewrite, decompose or full", e.Mode)
}

// ParseMode reads a request's "plan" field; empty means none.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "":
		return ModeNone, nil
	case ModeNone, ModeRewrite, ModeDecompose, ModeFull:
		return m, nil
	}
	return "", &ModeError{Mode: s}
}

// Intent is one independent sub-question: the search runs Query and its Variants and fuses
// them with its fusion (min-max by default).
type Intent struct {
	Query    string   `json:"query"`
	Variants []string `json:"variants,omitempty"`
}

// Plan is what a planner made of a query. It is stored as is in search_log.plan.
type Plan struct {
	Mode      Mode     `json:"mode"`
	Original  string   `json:"original"`
	Rewritten string   `json:"rewritten"`
	Intents   []Intent `json:"intents"`
	Planner   string   `json:"planner"`            // heuristic or llm: who made this plan
	Fallback  string   `json:"fallback,omitempty"` // why the LLM plan was not used
	// Err is the failure behind Fallback, for the log only: its text may quote the
	// provider's URL, and a plan is shown to the searching caller.
	Err error `json:"-"`
}

// Planner makes a plan for a query. A plan always has at least one intent.
type Planner interface {
	Plan(ctx context.Context, query string, mode Mode) (Plan, error)
}

// single is the plan of one intent.
func single(query, rewritten string, mode Mode, planner string) Plan {
	in := Intent{Query: rewritten}
	if rewritten != query {
		in.Variants = []string{query}
	}
	return Plan{Mode: mode, Original: query, Rewritten: rewritten, Intents: []Intent{in}, Planner: planner}
}
