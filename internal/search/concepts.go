package search

import (
	"strings"

	"github.com/toolgate/toolgate/internal/meaning"
)

// withConcepts adds to each query text the words of the operation it writes out
// (meaning.Concepts: "5x + 3 = 20" asks to calculate, "12 km in miles" to convert), so that
// every branch can find a calculator or a converter from a request that names neither.
// Texts without such a form are returned as they are.
func withConcepts(texts []string) []string {
	var out []string
	for i, t := range texts {
		c := meaning.Concepts(t)
		if len(c) == 0 {
			continue
		}
		if out == nil {
			out = append([]string(nil), texts...)
		}
		out[i] = t + " " + strings.Join(c, " ")
	}
	if out == nil {
		return texts
	}
	return out
}
