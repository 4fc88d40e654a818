package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/jsonl"
)

// Call is one tool call of an agent: a tool name and its arguments object.
type Call struct {
	Name      string                     `json:"name"`
	Arguments map[string]json.RawMessage `json:"arguments,omitempty"`
}

// Trace is one line of a trace file: the tool calls an agent made (or should make) for one
// sample, as steps run in order, each step a group of calls run in parallel.
type Trace struct {
	ID    string   `json:"id"`
	Steps [][]Call `json:"steps"`
}

// ParseTraces reads a trace file, one Trace per line. Ids must be unique and every call needs
// a name; all problems are reported together, by line.
func ParseTraces(r io.Reader) ([]Trace, error) {
	var (
		out      []Trace
		problems []Problem
		ids      = map[string]int{}
	)
	rd := jsonl.NewReader(r, catalog.MaxLineLen)
	for {
		line, raw, ok := rd.Next()
		if !ok {
			break
		}
		var tr Trace
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&tr); err != nil {
			problems = append(problems, Problem{Line: line, Reason: "invalid JSON: " + err.Error()})
			continue
		}
		switch {
		case tr.ID == "":
			problems = append(problems, Problem{Line: line, Reason: "missing id"})
		case ids[tr.ID] != 0:
			problems = append(problems, Problem{Line: line, ID: tr.ID, Reason: fmt.Sprintf("duplicate id (first on line %d)", ids[tr.ID])})
		case slices.ContainsFunc(tr.flat(), func(c Call) bool { return c.Name == "" }):
			problems = append(problems, Problem{Line: line, ID: tr.ID, Reason: "a call has no name"})
		default:
			ids[tr.ID] = line
			out = append(out, tr)
		}
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, &DatasetError{Problems: problems}
	}
	return out, nil
}

// flat lists a trace's calls in order, step by step.
func (t Trace) flat() []Call {
	var out []Call
	for _, step := range t.Steps {
		out = append(out, step...)
	}
	return out
}

// CallScores are the means over samples of the trace metrics, each in [0, 1].
type CallScores struct {
	NSamples int `json:"n_samples"`
	// FinMCP-Bench (seed 002 section 3.2), over the sets of tool names.
	ToolPrecision  float64 `json:"tool_precision"`
	ToolRecall     float64 `json:"tool_recall"`
	ToolF1         float64 `json:"tool_f1"`
	ExactMatchRate float64 `json:"exact_match_rate"`
	// Toolshed (seed 001 appendix A): recall of names, parameter keys and parameter values,
	// and 0.5·names + 0.25·keys + 0.25·values.
	NameScore     float64 `json:"name_score"`
	KeyScore      float64 `json:"key_score"`
	ValueScore    float64 `json:"value_score"`
	WeightedScore float64 `json:"weighted_score"`
}

// UnknownTraceError is a predicted trace whose id has no gold trace.
type UnknownTraceError struct{ IDs []string }

func (e *UnknownTraceError) Error() string {
	return "predicted traces without a gold trace: " + strings.Join(e.IDs, ", ")
}

// ScoreCalls scores predicted traces against gold traces, matched by id. A gold sample with
// no prediction scores 0 on every metric; a prediction without a gold sample is an error, as
// it means the two files do not belong together. Gold samples with no calls are rejected.
func ScoreCalls(gold, pred []Trace) (CallScores, error) {
	byID := make(map[string]Trace, len(pred))
	for _, p := range pred {
		byID[p.ID] = p
	}
	var unknown []string
	goldIDs := make(map[string]bool, len(gold))
	for _, g := range gold {
		goldIDs[g.ID] = true
		if len(g.flat()) == 0 {
			return CallScores{}, fmt.Errorf("gold trace %s has no calls", g.ID)
		}
	}
	for _, p := range pred {
		if !goldIDs[p.ID] {
			unknown = append(unknown, p.ID)
		}
	}
	if len(unknown) > 0 {
		return CallScores{}, &UnknownTraceError{IDs: unknown}
	}
	var s CallScores
	for _, g := range gold {
		one := scoreTrace(g, byID[g.ID])
		s.ToolPrecision += one.ToolPrecision
		s.ToolRecall += one.ToolRecall
		s.ToolF1 += one.ToolF1
		s.ExactMatchRate += one.ExactMatchRate
		s.NameScore += one.NameScore
		s.KeyScore += one.KeyScore
		s.ValueScore += one.ValueScore
		s.WeightedScore += one.WeightedScore
	}
	s.NSamples = len(gold)
	if n := float64(len(gold)); n > 0 {
		s.ToolPrecision /= n
		s.ToolRecall /= n
		s.ToolF1 /= n
		s.ExactMatchRate /= n
		s.NameScore /= n
		s.KeyScore /= n
		s.ValueScore /= n
		s.WeightedScore /= n
	}
	return s, nil
}

// scoreTrace scores one sample; the fields hold that sample's values.
func scoreTrace(gold, pred Trace) CallScores {
	var s CallScores
	g, p := nameSet(gold), nameSet(pred)
	both := 0
	for name := range p {
		if g[name] {
			both++
		}
	}
	if len(p) > 0 {
		s.ToolPrecision = float64(both) / float64(len(p))
	}
	s.ToolRecall = float64(both) / float64(len(g))
	if s.ToolPrecision+s.ToolRecall > 0 {
		s.ToolF1 = 2 * s.ToolPrecision * s.ToolRecall / (s.ToolPrecision + s.ToolRecall)
	}
	if sameGroups(gold, pred) {
		s.ExactMatchRate = 1
	}
	s.NameScore, s.KeyScore, s.ValueScore = toolshed(gold.flat(), pred.flat())
	s.WeightedScore = 0.5*s.NameScore + 0.25*s.KeyScore + 0.25*s.ValueScore
	return s
}

func nameSet(t Trace) map[string]bool {
	out := map[string]bool{}
	for _, c := range t.flat() {
		out[c.Name] = true
	}
	return out
}

// sameGroups reports whether pred has the same steps as gold, each with the same tool names
// in any order (calls of one step run in parallel, so their order carries no meaning).
func sameGroups(gold, pred Trace) bool {
	if len(gold.Steps) != len(pred.Steps) {
		return false
	}
	for i := range gold.Steps {
		if !slices.Equal(sortedNames(gold.Steps[i]), sortedNames(pred.Steps[i])) {
			return false
		}
	}
	return true
}

func sortedNames(step []Call) []string {
	out := make([]string, len(step))
	for i, c := range step {
		out[i] = c.Name
	}
	slices.Sort(out)
	return out
}

// toolshed computes the three recalls of the Toolshed evaluation. Each gold call is paired
// with one predicted call: first an unused call of the same name, otherwise the next unused
// call in order, so a misnamed call still earns credit for its keys and values (the
// Get_Stock_Price example of appendix A). Keys are recalled by name; a value is recalled when
// the paired call passes an equal JSON value under any key (the "company" vs "company_name"
// example). A gold call without arguments counts as one key and one value, recalled when
// its paired call has no arguments either.
func toolshed(gold, pred []Call) (names, keys, values float64) {
	paired := make([]int, len(gold))
	used := make([]bool, len(pred))
	for i := range paired {
		paired[i] = -1
	}
	for i, g := range gold {
		for j, p := range pred {
			if !used[j] && p.Name == g.Name {
				paired[i], used[j] = j, true
				break
			}
		}
	}
	next := 0
	for i := range gold {
		if paired[i] >= 0 {
			continue
		}
		for next < len(pred) && used[next] {
			next++
		}
		if next < len(pred) {
			paired[i], used[next] = next, true
		}
	}
	var nameHits, keyHits, keyTotal, valueHits, valueTotal int
	for i, g := range gold {
		var p *Call
		if paired[i] >= 0 {
			p = &pred[paired[i]]
		}
		if p != nil && p.Name == g.Name {
			nameHits++
		}
		if len(g.Arguments) == 0 {
			keyTotal++
			valueTotal++
			if p != nil && len(p.Arguments) == 0 {
				keyHits++
				valueHits++
			}
			continue
		}
		keyTotal += len(g.Arguments)
		valueTotal += len(g.Arguments)
		if p == nil {
			continue
		}
		predValues := map[string]bool{}
		for _, v := range p.Arguments {
			predValues[canonicalValue(v)] = true
		}
		for k, v := range g.Arguments {
			if _, ok := p.Arguments[k]; ok {
				keyHits++
			}
			if predValues[canonicalValue(v)] {
				valueHits++
			}
		}
	}
	return float64(nameHits) / float64(len(gold)), float64(keyHits) / float64(keyTotal), float64(valueHits) / float64(valueTotal)
}

// canonicalValue makes equal JSON values compare equal regardless of spacing and key order.
func canonicalValue(v json.RawMessage) string {
	c, err := catalog.Canonical(v)
	if err != nil {
		return string(v)
	}
	return string(c)
}
