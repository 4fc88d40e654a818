// Package tdwa combines the embeddings of a tool's document components into the tool's one
// search vector: Tool Document Weighted Average (ScaleMCP Equation 1), the Concat baseline
// and an unweighted mean.
package tdwa

import (
	"encoding/json"
	"fmt"
	"github.com/toolgate/toolgate/internal/derrors"
	"github.com/toolgate/toolgate/internal/embed"
	"math"
	"slices"
	"sort"
)

// Component kinds, as stored in tool_components.kind.
const (
	KindName                = "name"
	KindDescription         = "description"
	KindParameters          = "parameters"
	KindQuestion            = "question"
	KindTopics              = "topics"
	KindProfileFunction     = "profile_function"
	KindProfileTags         = "profile_tags"
	KindProfileWhenToUse    = "profile_when_to_use"
	KindProfileLimitation   = "profile_limitation"
	KindProfileExampleUsage = "profile_example_usage"
	// KindObserved is a search query that led to a call of the tool (opt-in,
	// TOOLGATE_OBSERVED_QUERIES, internal/observed): one row per query, averaged into one
	// vector first, like the questions. Not written by enrichment.
	KindObserved = "observed"
	// KindExpansion are the related words of a knowledge expansion (the heuristic enricher's
	// lexicon): not the tool's own words, weight 0 in the built-in tdwa profiles (the mean
	// strategy averages it in like every kind).
	KindExpansion = "expansion"
	KindConcat    = "concat"
)

// Kinds lists every component kind a weight may name, in document order. concat is not
// weightable: it is the Concat strategy's single input. observed comes last: Combine sums
// the kinds in this order, so a tool without observed queries gets bit for bit the vector
// it had before the kind existed; expansion, added after it, likewise.
var Kinds = []string{
	KindName, KindDescription, KindParameters, KindQuestion, KindTopics,
	KindProfileFunction, KindProfileTags, KindProfileWhenToUse, KindProfileLimitation,
	KindProfileExampleUsage, KindObserved, KindExpansion,
}

// Strategies.
const (
	StrategyTDWA   = "tdwa"
	StrategyConcat = "concat"
	StrategyMean   = "mean"
)

// Profile is how a tool's components become its vector.
type Profile struct {
	Strategy string
	Weights  map[string]float64 // kind -> weight >= 0; used by tdwa only
}

// InvalidProfileError says why a profile cannot be used.
type InvalidProfileError struct{ Reason string }

func (e *InvalidProfileError) Error() string        { return "invalid weight profile: " + e.Reason }
func (e *InvalidProfileError) Is(target error) bool { return target == derrors.Invalid }
func (e *InvalidProfileError) Code() string         { return "invalid_profile" }

// NoComponentsError is returned when a tool has none of the components a profile uses.
type NoComponentsError struct{ Strategy string }

func (e *NoComponentsError) Error() string {
	return fmt.Sprintf("no embedded component the %s strategy can use", e.Strategy)
}

// ParseProfile reads a profile as stored (strategy, weights JSON) and validates it.
func ParseProfile(strategy string, weights []byte) (Profile, error) {
	p := Profile{Strategy: strategy, Weights: map[string]float64{}}
	if len(weights) > 0 {
		if err := json.Unmarshal(weights, &p.Weights); err != nil {
			return p, &InvalidProfileError{Reason: "weights must be an object of kind to number"}
		}
	}
	return p, p.Validate()
}

// Validate checks the strategy, that every weight names a known kind and is a finite
// non-negative number, and that a tdwa profile has at least one positive weight.
func (p Profile) Validate() error {
	switch p.Strategy {
	case StrategyConcat, StrategyMean:
		if len(p.Weights) > 0 {
			return &InvalidProfileError{Reason: p.Strategy + " takes no weights"}
		}
		return nil
	case StrategyTDWA:
	default:
		return &InvalidProfileError{Reason: fmt.Sprintf("unknown strategy %q (want tdwa, concat or mean)", p.Strategy)}
	}
	positive := false
	keys := make([]string, 0, len(p.Weights))
	for k := range p.Weights {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		w := p.Weights[k]
		if !slices.Contains(Kinds, k) {
			return &InvalidProfileError{Reason: fmt.Sprintf("unknown component kind %q", k)}
		}
		if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
			return &InvalidProfileError{Reason: fmt.Sprintf("weight of %s must be a non-negative number", k)}
		}
		positive = positive || w > 0
	}
	if !positive {
		return &InvalidProfileError{Reason: "at least one weight must be positive"}
	}
	return nil
}

// Component is one embedded component of a tool.
type Component struct {
	Kind    string
	Ordinal int
	Vector  []float32
}

// Combine returns the tool's unit-length search vector under p:
//
//   - tdwa: v = normalize(Σ_k w_k·e_k / Σ_k w_k) over the kinds k the tool has with w_k > 0,
//     where e_k is the kind's vector and the vectors of several components of one kind (the
//     synthetic questions) are first averaged into one;
//   - concat: the vector of the concat component;
//   - mean: the unweighted mean of the per-kind vectors (questions averaged first), concat
//     excluded.
//
// Components without a vector are ignored. All vectors must have one length.
func Combine(components []Component, p Profile) ([]float32, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	byKind := map[string][][]float32{}
	dims := -1
	for _, c := range components {
		if len(c.Vector) == 0 {
			continue
		}
		if dims >= 0 && len(c.Vector) != dims {
			return nil, fmt.Errorf("tdwa: component %s/%d has %d dimensions, others %d", c.Kind, c.Ordinal, len(c.Vector), dims)
		}
		dims = len(c.Vector)
		byKind[c.Kind] = append(byKind[c.Kind], c.Vector)
	}
	if p.Strategy == StrategyConcat {
		vs := byKind[KindConcat]
		if len(vs) == 0 {
			return nil, &NoComponentsError{Strategy: p.Strategy}
		}
		return embed.Normalize64(toF64(vs[0])), nil
	}
	sum := make([]float64, max(dims, 0))
	total := 0.0
	for _, k := range Kinds {
		vs := byKind[k]
		if len(vs) == 0 {
			continue
		}
		w := 1.0
		if p.Strategy == StrategyTDWA {
			w = p.Weights[k]
		}
		if w == 0 {
			continue
		}
		mean := average(vs)
		for i := range sum {
			sum[i] += w * mean[i]
		}
		total += w
	}
	if total == 0 {
		return nil, &NoComponentsError{Strategy: p.Strategy}
	}
	// Dividing by the present weights' total re-normalizes them; it does not change the
	// direction, but keeps the pre-normalization vector meaningful as a weighted average.
	for i := range sum {
		sum[i] /= total
	}
	return embed.Normalize64(sum), nil
}

func average(vs [][]float32) []float64 {
	out := make([]float64, len(vs[0]))
	for _, v := range vs {
		for i, x := range v {
			out[i] += float64(x)
		}
	}
	for i := range out {
		out[i] /= float64(len(vs))
	}
	return out
}

func toF64(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}
