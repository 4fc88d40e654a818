// Package confidence is what the search's confidence models are given and how a model
// applies to it (docs/search.md#confidence): the search computes Inputs for each answer and
// applies its models with Logistic; the evaluation writes Inputs to its --per-query files
// and fits the models' coefficients on them (docs/eval.md#calibration).
package confidence

import "math"

// Inputs are what the confidence models of one search were given: the set of branches
// whose models ran (hybrid, lexical or vector), each result's features in the order of the
// results, and the answer model's (nil without results).
type Inputs struct {
	Branches string         `json:"branches"`
	Results  []ResultInputs `json:"results"`
	Answer   []float64      `json:"answer"`
}

// ResultInputs are the features of one result; NameMatch says its confidence is fixed
// whatever the models say (the request named the tool; for the first result, the answer's
// too).
type ResultInputs struct {
	Features  []float64 `json:"features"`
	NameMatch bool      `json:"name_match,omitempty"`
}

// Logistic is the probability the model coef (intercept, then one coefficient per feature)
// gives x.
func Logistic(coef, x []float64) float64 {
	z := coef[0]
	for i, v := range x {
		z += coef[i+1] * v
	}
	return 1 / (1 + math.Exp(-z))
}
