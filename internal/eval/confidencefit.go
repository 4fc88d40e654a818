package eval

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/internal/confidence"
)

// ReadOutcomes reads a --per-query file: one QueryOutcome per line (the lines' other fields,
// the run and the configuration, are left out).
func ReadOutcomes(r io.Reader) ([]QueryOutcome, error) {
	var out []QueryOutcome
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var o QueryOutcome
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, o)
	}
	return out, sc.Err()
}

// Halves of a dataset for fitting on one and measuring on the other: the queries whose id
// ends in an odd or an even number ("zh-007" is odd).
const (
	HalfOdd  = "odd"
	HalfEven = "even"
)

// OfHalf returns the outcomes of queries in half (HalfOdd or HalfEven; "" is every one). An
// id that does not end in a number is in neither half.
func OfHalf(outs []QueryOutcome, half string) ([]QueryOutcome, error) {
	if half == "" {
		return outs, nil
	}
	if half != HalfOdd && half != HalfEven {
		return nil, fmt.Errorf("eval: half %q is not %s or %s", half, HalfOdd, HalfEven)
	}
	var kept []QueryOutcome
	for _, o := range outs {
		digits := len(o.ID) - len(strings.TrimRight(o.ID, "0123456789"))
		n, err := strconv.Atoi(o.ID[len(o.ID)-digits:])
		if digits == 0 || err != nil {
			continue
		}
		if (n%2 == 1) == (half == HalfOdd) {
			kept = append(kept, o)
		}
	}
	return kept, nil
}

// LoadConfidenceSet reads the --per-query file spec names, "FILE" or "FILE:odd" /
// "FILE:even" for one half of its queries (OfHalf), as a set labelled spec.
func LoadConfidenceSet(spec string, fitted bool) (ConfidenceSet, error) {
	path, half := spec, ""
	for _, h := range []string{HalfOdd, HalfEven} {
		if p, ok := strings.CutSuffix(spec, ":"+h); ok {
			path, half = p, h
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return ConfidenceSet{}, err
	}
	defer f.Close()
	outs, err := ReadOutcomes(f)
	if err != nil {
		return ConfidenceSet{}, fmt.Errorf("%s: %w", path, err)
	}
	outs, err = OfHalf(outs, half)
	if err != nil {
		return ConfidenceSet{}, err
	}
	return ConfidenceSet{Label: spec, Fitted: fitted, Outcomes: outs}, nil
}

// ConfidenceModels are the coefficients of the confidence models of one set of branches,
// in the order of confidence.Inputs: Result over a result's features, Answer over the
// answer's.
type ConfidenceModels struct {
	Result []float64 `json:"result"`
	Answer []float64 `json:"answer"`
}

// confidenceSamples are the rows a pair of models is fitted on: each result's features and
// whether it is a gold tool, each answer's and whether its first result is.
type confidenceSamples struct {
	result, answer       [][]float64
	resultGold, answerOK []float64
}

// BranchSets are the sets of branches a search's confidence models are chosen by
// (confidence.Inputs' Branches), in the order they are printed.
var BranchSets = []string{"hybrid", "lexical", "vector"}

// FitConfidence fits a pair of models per set of branches on the outcomes' signals, with L2
// penalty l2: the result model on every result, the answer model on every answer. Results
// and answers found by name are left out (their confidence is fixed, not modelled), as are
// outcomes without signals. A set of branches without a search gets no models.
func FitConfidence(outs []QueryOutcome, l2 float64) (map[string]ConfidenceModels, error) {
	samples := map[string]*confidenceSamples{}
	for _, o := range outs {
		s := o.Signals
		if s == nil || len(s.Results) == 0 {
			continue
		}
		if len(s.Results) != len(o.Results) {
			return nil, fmt.Errorf("eval: query %s: %d results and signals of %d", o.ID, len(o.Results), len(s.Results))
		}
		gold := make([]string, len(o.Gold))
		for i, g := range o.Gold {
			gold[i] = g.Tool
		}
		cs := samples[s.Branches]
		if cs == nil {
			cs = &confidenceSamples{}
			samples[s.Branches] = cs
		}
		for i, r := range s.Results {
			if r.NameMatch {
				continue
			}
			cs.result = append(cs.result, r.Features)
			cs.resultGold = append(cs.resultGold, boolFloat(slices.Contains(gold, o.Results[i])))
		}
		if !s.Results[0].NameMatch {
			cs.answer = append(cs.answer, s.Answer)
			cs.answerOK = append(cs.answerOK, boolFloat(slices.Contains(gold, o.Results[0])))
		}
	}
	out := map[string]ConfidenceModels{}
	for branches, cs := range samples {
		if len(cs.result) == 0 || len(cs.answer) == 0 {
			continue
		}
		var m ConfidenceModels
		var err error
		if m.Result, err = FitLogistic(cs.result, cs.resultGold, l2); err != nil {
			return nil, fmt.Errorf("%s result model: %w", branches, err)
		}
		if m.Answer, err = FitLogistic(cs.answer, cs.answerOK, l2); err != nil {
			return nil, fmt.Errorf("%s answer model: %w", branches, err)
		}
		out[branches] = m
	}
	return out, nil
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// ConfidenceModelsGo renders models as the variables of internal/search/confidence.go, each
// coefficient to 3 decimals.
func ConfidenceModelsGo(models map[string]ConfidenceModels) string {
	var b strings.Builder
	for _, branches := range BranchSets {
		m, ok := models[branches]
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "\t%sConfidence = confidenceModels{\n\t\tbranches: %q,\n\t\tresult:   %s,\n\t\tanswer:   %s,\n\t}\n",
			branches, branches, goFloats(m.Result), goFloats(m.Answer))
	}
	return b.String()
}

func goFloats(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatFloat(math.Round(x*1000)/1000, 'f', -1, 64)
		if s[i] == "-0" {
			s[i] = "0"
		}
	}
	return "[]float64{" + strings.Join(s, ", ") + "}"
}

// ConfidenceSet is a set of outcomes to measure the models on: Label names it, Fitted says
// the models were fitted on it.
type ConfidenceSet struct {
	Label    string
	Fitted   bool
	Outcomes []QueryOutcome
}

// ConfidenceRow is the calibration of the answers of one set of branches of a
// ConfidenceSet (of one kind of its queries, or of all when Kind is ""): Served with the
// confidence the searches answered with, Refit with the refitted models'.
type ConfidenceRow struct {
	Set      string       `json:"set"`
	Fitted   bool         `json:"fitted"`
	Branches string       `json:"branches"`
	Kind     string       `json:"kind,omitempty"`
	Served   *Calibration `json:"served"`
	Refit    *Calibration `json:"refit"`
}

// MeasureConfidence is the calibration of each set's answers, per set of branches and, when
// the set has several kinds of queries, per kind, with the confidence each search answered
// with and with models' (an answer whose first result was found by name keeps its
// confidence). Outcomes without signals, or whose set of branches models lacks, are left
// out.
func MeasureConfidence(sets []ConfidenceSet, models map[string]ConfidenceModels, threshold float64) []ConfidenceRow {
	var rows []ConfidenceRow
	for _, set := range sets {
		for _, branches := range BranchSets {
			m, ok := models[branches]
			if !ok {
				continue
			}
			for _, kind := range kindsOf(set.Outcomes, branches) {
				served, refit := measureConfidence(set.Outcomes, branches, kind, m, threshold)
				rows = append(rows, ConfidenceRow{Set: set.Label, Fitted: set.Fitted, Branches: branches, Kind: kind,
					Served: served, Refit: refit})
			}
		}
	}
	return rows
}

// kindsOf are the kinds of the outcomes whose searches ran branches, sorted, after "" (all
// of them) when there are several; none when no search ran branches.
func kindsOf(outs []QueryOutcome, branches string) []string {
	var kinds []string
	for _, o := range outs {
		if o.Signals != nil && o.Signals.Branches == branches && !slices.Contains(kinds, o.Kind) {
			kinds = append(kinds, o.Kind)
		}
	}
	slices.Sort(kinds)
	if len(kinds) > 1 {
		kinds = append([]string{""}, kinds...)
	}
	return kinds
}

// measureConfidence is the calibration of the answers of the outcomes of kind ("" every
// kind) whose searches ran branches, with the confidence they were served and with m's.
func measureConfidence(outs []QueryOutcome, branches, kind string, m ConfidenceModels, threshold float64) (served, refit *Calibration) {
	sc := &calibrationCounter{threshold: threshold}
	rc := &calibrationCounter{threshold: threshold}
	for _, o := range outs {
		s := o.Signals
		if s == nil || s.Branches != branches || kind != "" && o.Kind != kind || o.Confidence == nil {
			continue
		}
		gold := make([]string, len(o.Gold))
		for i, g := range o.Gold {
			gold[i] = g.Tool
		}
		c := 0.0
		switch {
		case len(s.Results) > 0 && s.Results[0].NameMatch:
			c = *o.Confidence
		case len(s.Results) > 0:
			c = math.Round(confidence.Logistic(m.Answer, s.Answer)*1000) / 1000
		}
		sc.add(*o.Confidence, o.Results, gold)
		rc.add(c, o.Results, gold)
	}
	return sc.report(), rc.report()
}

// ConfidenceTable renders rows as Markdown: per row the searches, then for the served and
// the refitted confidence the right rate of the first result below and at or above the
// threshold (number of searches in brackets) and the ECE.
func ConfidenceTable(rows []ConfidenceRow) string {
	if len(rows) == 0 {
		return ""
	}
	th := rows[0].Served.Threshold
	var b strings.Builder
	fmt.Fprintf(&b, "| set | branches | kind | searches | served: below %g / %g or above; ECE | refit: below %g / %g or above; ECE |\n", th, th, th, th)
	b.WriteString("|---|---|---|---:|---|---|\n")
	cell := func(bin CalibrationBin) string {
		if bin.Searches == 0 {
			return "— (0)"
		}
		return fmt.Sprintf("%.3f (%d)", bin.Right, bin.Searches)
	}
	for _, r := range rows {
		set := r.Set
		if r.Fitted {
			set += " (fitted on)"
		}
		kind := r.Kind
		if kind == "" {
			kind = "all"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %s / %s; %.3f | %s / %s; %.3f |\n", set, r.Branches, kind, r.Served.Searches,
			cell(r.Served.Below), cell(r.Served.Above), r.Served.ECE, cell(r.Refit.Below), cell(r.Refit.Above), r.Refit.ECE)
	}
	return b.String()
}
