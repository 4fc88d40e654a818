package eval

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/confidence"
)

// FitLogistic recovers the coefficients of a known logistic model from 20,000 rows drawn
// from it (a slight L2 penalty moves them by less than the sampling noise), gives 0 to a
// column that never varies, and a strong penalty shrinks the coefficients toward 0.
func TestFitLogisticRecoversKnownModel(t *testing.T) {
	t.Parallel()
	want := []float64{-1, 2, -0.5, 1.5}
	rng := rand.New(rand.NewPCG(1, 2))
	var x [][]float64
	var y []float64
	for range 20000 {
		row := []float64{rng.NormFloat64(), rng.Float64() * 3, float64(rng.IntN(2)), 1} // the last column is constant
		x = append(x, row)
		y = append(y, boolFloat(rng.Float64() < confidence.Logistic(append(want, 0), row)))
	}
	got, err := FitLogistic(x, y, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 || got[4] != 0 {
		t.Fatalf("coefficients %v: want 5, the constant column's 0", got)
	}
	for i, w := range want {
		if math.Abs(got[i]-w) > 0.1 {
			t.Errorf("coefficient %d: %.3f, want %.3f ± 0.1 (all: %v)", i, got[i], w, got)
		}
	}
	shrunk, err := FitLogistic(x, y, 20000)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 4; i++ {
		if math.Abs(shrunk[i]) >= math.Abs(got[i])/2 {
			t.Errorf("coefficient %d: %.3f with a strong penalty, %.3f without", i, shrunk[i], got[i])
		}
	}
	// two columns that always move together cannot be told apart without a penalty
	dup := [][]float64{{0, 0}, {1, 1}, {2, 2}, {3, 3}}
	if _, err := FitLogistic(dup, []float64{0, 1, 0, 1}, 0); !errors.Is(err, ErrSingular) {
		t.Errorf("collinear columns: %v, want ErrSingular", err)
	}
	if c, err := FitLogistic(dup, []float64{0, 1, 0, 1}, 1); err != nil || math.Abs(c[1]-c[2]) > 1e-9 {
		t.Errorf("collinear columns with a penalty: %v, %v; want equal coefficients", c, err)
	}
}

// outcomeOf is a query's outcome of two results, both with the features of the answer's
// (answer less its last element, the gap), the first gold or not, served with conf.
func outcomeOf(id, kind string, branches string, firstRight bool, conf float64, answer []float64) QueryOutcome {
	gold := "other"
	if firstRight {
		gold = "a"
	}
	r := 1
	return QueryOutcome{ID: id, Kind: kind, Results: []string{"a", "b"}, Gold: []GoldRank{{Tool: gold, Rank: &r}}, Confidence: &conf,
		Signals: &confidence.Inputs{Branches: branches, Answer: answer,
			Results: []confidence.ResultInputs{{Features: answer[:len(answer)-1]}, {Features: answer[:len(answer)-1]}}}}
}

// The per-query lines are read back, split into halves by the parity of the id's number,
// and fitted on per set of branches: the answer model on whether the first result is gold,
// the result model on whether each result is; an answer found by name is left out of the
// fit and keeps its confidence when measured.
func TestFitAndMeasureConfidence(t *testing.T) {
	t.Parallel()
	var lines strings.Builder
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 400 {
		f := rng.Float64()
		right := rng.Float64() < confidence.Logistic([]float64{-2, 4, 0}, []float64{f, 1})
		o := outcomeOf("q-"+strconv.Itoa(i+1), []string{"ka", "kb"}[i/2%2], "lexical", right, 0.5, []float64{f, 1})
		line, _ := json.Marshal(o)
		lines.WriteString(`{"run":"r","config":"lexical",` + string(line[1:]) + "\n")
	}
	named := outcomeOf("q-1001", "ka", "lexical", true, 0.99, []float64{0.5, 1})
	named.Signals.Results[0].NameMatch = true
	line, _ := json.Marshal(named)
	lines.WriteString(string(line) + "\n")

	read, err := ReadOutcomes(strings.NewReader(lines.String()))
	if err != nil || len(read) != 401 || read[0].Signals == nil || read[0].Signals.Branches != "lexical" {
		t.Fatalf("read %d outcomes, %v: %+v", len(read), err, read[0])
	}
	odd, err := OfHalf(read, HalfOdd)
	if err != nil || len(odd) != 201 || odd[0].ID != "q-1" || odd[200].ID != "q-1001" {
		t.Fatalf("odd half: %d, %v", len(odd), err)
	}
	even, _ := OfHalf(read, HalfEven)
	if len(even) != 200 || even[0].ID != "q-2" {
		t.Fatalf("even half: %d", len(even))
	}
	if _, err := OfHalf(read, "third"); err == nil {
		t.Fatal("a half that is neither odd nor even was accepted")
	}
	models, err := FitConfidence(odd, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := models["lexical"]
	if !ok || len(models) != 1 || len(m.Answer) != 3 || len(m.Result) != 2 || m.Answer[2] != 0 {
		t.Fatalf("models %+v: want the lexical pair, the constant gap at 0", models)
	}
	if m.Answer[1] < 2 || m.Answer[0] > -0.5 {
		t.Errorf("answer model %v, want about [-2 4 0]", m.Answer)
	}
	rows := MeasureConfidence([]ConfidenceSet{{Label: "fit", Fitted: true, Outcomes: odd}, {Label: "measured", Outcomes: even},
		{Label: "named", Outcomes: []QueryOutcome{named}}}, models, 0.4)
	if len(rows) != 7 || rows[0].Kind != "" || rows[1].Kind != "ka" || rows[3].Set != "measured" || !rows[0].Fitted || rows[3].Fitted {
		t.Fatalf("rows %+v: want all, ka and kb of each set, then the named answer's", rows)
	}
	if s := rows[0].Served; s.Searches != 201 || s.Bins[3].Searches != 200 || s.Bins[5].Searches != 1 {
		t.Errorf("fit set, served: %+v; want 200 at 0.5, the named answer at 0.99", s)
	}
	// the refitted confidence tells right answers from wrong ones where the served one
	// (0.5 for all) cannot
	if r := rows[3].Refit; r.Below.Right > 0.35 || r.Above.Right < 0.6 || r.Below.Searches == 0 {
		t.Errorf("measured half, refitted: %.3f right below 0.4 (%d), %.3f at or above", r.Below.Right, r.Below.Searches, r.Above.Right)
	}
	if r := rows[6].Refit; r.Searches != 1 || r.Bins[5].MeanConfidence != 0.99 {
		t.Errorf("the named answer, refitted: %+v; want it at 0.99", r)
	}
	if table := ConfidenceTable(rows); !strings.Contains(table, "| fit (fitted on) | lexical | all | 201 |") {
		t.Errorf("table:\n%s", table)
	}
	if goSrc := ConfidenceModelsGo(models); !strings.Contains(goSrc, "\tlexicalConfidence = confidenceModels{\n\t\tbranches: \"lexical\",\n\t\tresult:   []float64{") {
		t.Errorf("Go:\n%s", goSrc)
	}
}
