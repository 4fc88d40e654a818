package meaning_test

import (
	"slices"
	"testing"

	"github.com/toolgate/toolgate/internal/meaning"
)

func TestConcepts(t *testing.T) {
	for _, tc := range []struct {
		text string
		want string // the first word of the concept, "" for none
	}{
		{"Can you solve this equation - 5x + 3 = 20?", "calculate"},
		{"what is 17% of 240", "calculate"},
		{"2^10 please", "calculate"},
		{"x = 7, what is x squared", "calculate"},
		{"take the sqrt(x) of a vector's length", "calculate"}, // a form without a digit
		{"how much is 12 km in miles", "convert"},
		{"turn 70 °F to celsius", "convert"},
		{"100 USD to EUR", "convert"},
		{"remind me on 2024-06-01", "date"},
		{"what day of the week is March 3", "date"},
		// a year, a count, an identifier or a range is no operation
		{"What is Apple's total revenue for 2022?", ""},
		{"show the top 5 open issues", ""},
		{"list commits on branch release-2.1", ""},
		{"fetch page 2 of the results", ""},
		{"the 3 in the morning standup", ""},
	} {
		got := meaning.Concepts(tc.text)
		if tc.want == "" && len(got) > 0 || tc.want != "" && !slices.Contains(got, tc.want) {
			t.Errorf("%q: concepts %v, want %q", tc.text, got, tc.want)
		}
	}
}
