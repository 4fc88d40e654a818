package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/eval"
	"github.com/toolgate/toolgate/internal/evalrun"
	"github.com/toolgate/toolgate/internal/search"
)

// --per-query lines carry what the confidence models of each search were given, computed
// by the search service itself: the served models applied to them give back the answer's
// confidence, for every set of branches. `eval fit-confidence` reads the lines back, fits
// one pair of models per set of branches on one half of the queries and measures them on
// the other.
func TestEvalPerQuerySignalsAndFitConfidence(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (a whole server, evaluation or concurrent run): the full suite, make test, runs it")
	}
	t.Parallel()
	env := evalEnv(t)
	dir := evalDataset(t, 10)
	perQuery := filepath.Join(t.TempDir(), "queries.jsonl")
	if code, _, errOut := runCLI(t, env, "eval", dir, "--json", "--k", "5", "--mode", "all", "--per-query", perQuery); code != 0 {
		t.Fatalf("eval: exit %d: %s", code, errOut)
	}
	raw, err := os.ReadFile(perQuery)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := eval.ReadOutcomes(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	if len(outs) != len(lines) || len(outs) == 0 {
		t.Fatalf("%d outcomes read back from %d lines", len(outs), len(lines))
	}
	branches := map[string]int{}
	checked := 0
	for i, o := range outs {
		var line evalrun.PerQueryLine
		if err := json.Unmarshal([]byte(lines[i]), &line); err != nil {
			t.Fatal(err)
		}
		s := o.Signals
		if s == nil || o.Confidence == nil || len(s.Results) != len(o.Results) || len(o.Results) == 0 ||
			!strings.HasPrefix(line.Config, s.Branches+" ") || len(s.Answer) != len(s.Results[0].Features)+1 {
			t.Fatalf("line %d: %s", i+1, lines[i])
		}
		branches[s.Branches]++
		if s.Results[0].NameMatch {
			continue
		}
		// the line's signals give the served confidence back
		if answer, _ := search.ConfidenceOf(*s); math.Round(answer*1000)/1000 != *o.Confidence {
			t.Errorf("line %d: confidence %v, the served models make %v of its signals", i+1, *o.Confidence, answer)
		}
		checked++
	}
	if len(branches) != 3 || checked < len(outs)/2 || branches["hybrid"] != branches["vector"] || branches["hybrid"] != branches["lexical"] {
		t.Fatalf("searches per set of branches: %v", branches)
	}

	code, stdout, errOut := runCLI(t, nil, "eval", "fit-confidence", "--json", "--measure", perQuery+":even", perQuery+":odd")
	if code != 0 {
		t.Fatalf("fit-confidence: exit %d: %s", code, errOut)
	}
	var fit struct {
		Models map[string]eval.ConfidenceModels `json:"models"`
		Rows   []eval.ConfidenceRow             `json:"calibration"`
	}
	if err := json.Unmarshal([]byte(stdout), &fit); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	features := len(outs[0].Signals.Results[0].Features)
	for _, b := range eval.BranchSets {
		m, ok := fit.Models[b]
		if !ok || len(m.Result) != features+1 || len(m.Answer) != features+2 {
			t.Errorf("%s models %+v: want %d and %d coefficients", b, m, features+1, features+2)
		}
	}
	measured := 0
	for _, r := range fit.Rows {
		if r.Set == perQuery+":even" && !r.Fitted && r.Kind == "" {
			measured += r.Served.Searches
		}
	}
	if measured == 0 || measured >= len(outs) {
		t.Errorf("%d searches measured on the even half of %d", measured, len(outs))
	}
	for _, args := range [][]string{{}, {perQuery, "--measure", perQuery}} {
		if code, _, errOut := runCLI(t, nil, append([]string{"eval", "fit-confidence"}, args...)...); code != 2 || !strings.Contains(errOut, "usage") {
			t.Errorf("fit-confidence %v: exit %d: %s", args, code, errOut)
		}
	}
}
