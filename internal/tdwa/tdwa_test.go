package tdwa

import (
	"errors"
	"math"
	"testing"
)

func near(t *testing.T, got []float32, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("len %d, want %d", len(got), len(want))
	}
	for i := range want {
		if math.Abs(float64(got[i])-want[i]) > 1e-6 {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestCombineTDWA(t *testing.T) {
	s := 1 / math.Sqrt2
	comps := []Component{
		{Kind: KindName, Vector: []float32{1, 0, 0}},
		{Kind: KindDescription, Vector: []float32{0, 1, 0}},
		{Kind: KindQuestion, Ordinal: 0, Vector: []float32{0, 0, 1}},
		{Kind: KindQuestion, Ordinal: 1, Vector: []float32{1, 0, 0}},
		{Kind: KindConcat, Vector: []float32{0, 1, 0}},
	}
	cases := []struct {
		name    string
		weights map[string]float64
		want    []float64
	}{
		// questions averaged first: (0.5,0,0.5); 0.5*name + 0.5*q = (0.75,0,0.25)
		{"questions averaged", map[string]float64{"name": 1, "question": 1}, []float64{0.75 / math.Hypot(0.75, 0.25), 0, 0.25 / math.Hypot(0.75, 0.25)}},
		{"equal name and description", map[string]float64{"name": 0.5, "description": 0.5}, []float64{s, s, 0}},
		{"weights scale", map[string]float64{"name": 3, "description": 1}, []float64{3 / math.Sqrt(10), 1 / math.Sqrt(10), 0}},
		// parameters and topics absent: their weight is dropped, the rest re-normalized
		{"missing kinds", map[string]float64{"name": 0.2, "parameters": 0.7, "topics": 0.1, "description": 0.2}, []float64{s, s, 0}},
		{"zero weight ignored", map[string]float64{"name": 1, "description": 0}, []float64{1, 0, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Combine(comps, Profile{Strategy: StrategyTDWA, Weights: c.weights})
			if err != nil {
				t.Fatal(err)
			}
			near(t, got, c.want)
		})
	}
	got, err := Combine(comps, Profile{Strategy: StrategyConcat})
	if err != nil {
		t.Fatal(err)
	}
	near(t, got, []float64{0, 1, 0})
	// mean over name (1,0,0), description (0,1,0), questions (.5,0,.5) = (1.5,1,.5)/3
	got, err = Combine(comps, Profile{Strategy: StrategyMean})
	if err != nil {
		t.Fatal(err)
	}
	n := math.Sqrt(1.5*1.5 + 1 + 0.25)
	near(t, got, []float64{1.5 / n, 1 / n, 0.5 / n})
}

func TestCombineNothingUsable(t *testing.T) {
	comps := []Component{{Kind: KindName, Vector: []float32{1, 0}}}
	var nc *NoComponentsError
	if _, err := Combine(comps, Profile{Strategy: StrategyTDWA, Weights: map[string]float64{"question": 1}}); !errors.As(err, &nc) {
		t.Fatalf("want NoComponentsError, got %v", err)
	}
	if _, err := Combine(comps, Profile{Strategy: StrategyConcat}); !errors.As(err, &nc) {
		t.Fatalf("want NoComponentsError, got %v", err)
	}
	if _, err := Combine([]Component{{Kind: KindName, Vector: []float32{1, 0}}, {Kind: KindDescription, Vector: []float32{1}}},
		Profile{Strategy: StrategyMean}); err == nil {
		t.Fatal("mixed dimensions accepted")
	}
}

func TestValidate(t *testing.T) {
	bad := []Profile{
		{Strategy: StrategyTDWA, Weights: map[string]float64{"name": 0, "description": 0}},
		{Strategy: StrategyTDWA, Weights: map[string]float64{}},
		{Strategy: StrategyTDWA, Weights: map[string]float64{"name": -0.1, "description": 1}},
		{Strategy: StrategyTDWA, Weights: map[string]float64{"nmae": 1}},
		{Strategy: StrategyTDWA, Weights: map[string]float64{"concat": 1}},
		{Strategy: StrategyTDWA, Weights: map[string]float64{"name": math.NaN()}},
		{Strategy: "sum", Weights: map[string]float64{"name": 1}},
		{Strategy: StrategyMean, Weights: map[string]float64{"name": 1}},
	}
	for _, p := range bad {
		var ip *InvalidProfileError
		if _, err := Combine([]Component{{Kind: KindName, Vector: []float32{1}}}, p); !errors.As(err, &ip) {
			t.Errorf("%+v: want InvalidProfileError, got %v", p, err)
		}
	}
	if _, err := ParseProfile("tdwa", []byte(`{"name":0.2,"question":0.8}`)); err != nil {
		t.Fatal(err)
	}
	var ip *InvalidProfileError
	if _, err := ParseProfile("tdwa", []byte(`{"name":"x"}`)); !errors.As(err, &ip) {
		t.Fatalf("want InvalidProfileError, got %v", err)
	}
}
