package eval

import (
	"bytes"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/catalog"
)

// Whatever the input, parsing either fails with an error or returns queries that satisfy
// every rule the loader promises.
func FuzzParseQueries(f *testing.F) {
	f.Add([]byte(`{"id":"1","query":"a?","gold":["get_a"],"kind":"single"}`))
	f.Add([]byte("{\"id\":\"1\",\"query\":\"a\",\"gold\":[\"get_b\"]}\n{\"id\":\"1\"}\n"))
	f.Add([]byte(`{"id":"","query":" ","gold":null}`))
	tools := []catalog.Tool{{Name: "get_a"}, {Name: "get_b"}}
	f.Fuzz(func(t *testing.T, data []byte) {
		qs, err := ParseQueries(bytes.NewReader(data), tools)
		if err != nil {
			return
		}
		ids := map[string]bool{}
		for _, q := range qs {
			if q.ID == "" || ids[q.ID] || strings.TrimSpace(q.Query) == "" || len(q.Gold) == 0 {
				t.Fatalf("invalid query accepted: %+v", q)
			}
			ids[q.ID] = true
			for _, g := range q.Gold {
				if g != "get_a" && g != "get_b" {
					t.Fatalf("unknown gold accepted: %q", g)
				}
			}
		}
	})
}

// Scoring any parsed traces against themselves is a perfect score, and never panics.
func FuzzScoreCalls(f *testing.F) {
	f.Add([]byte(`{"id":"1","steps":[[{"name":"a","arguments":{"x":1}},{"name":"b"}],[{"name":"a"}]]}`))
	f.Add([]byte(`{"id":"1","steps":[[{"name":"a","arguments":{"x":null,"y":[1,2]}}]]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		traces, err := ParseTraces(bytes.NewReader(data))
		if err != nil {
			return
		}
		var gold []Trace
		for _, tr := range traces {
			if len(tr.flat()) > 0 {
				gold = append(gold, tr)
			}
		}
		s, err := ScoreCalls(gold, gold)
		if err != nil {
			t.Fatal(err)
		}
		if len(gold) > 0 && (s.ToolF1 != 1 || s.ExactMatchRate != 1 || s.WeightedScore != 1) {
			t.Fatalf("self-score %+v for %s", s, data)
		}
	})
}
