package eval

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// A tool that wrongly enters the top 5 of most searches is the worst hub; one that enters
// a search's top 5 as its gold tool, or below rank 5, is not counted there.
func TestHubness(t *testing.T) {
	rankings := map[string][]string{}
	var queries []Query
	for i := range 40 {
		q := string(rune('A'+i%26)) + strings.Repeat("x", i/26)
		queries = append(queries, Query{ID: q, Query: q, Gold: []string{"gold-" + q}})
		// "a" is in every top 5, "hub" too but as a gold tool of the first search; "deep" is
		// always at rank 6; "twice" is in the top 5 of the first two searches, twice in each.
		rankings[q] = []string{"gold-" + q, "hub", "a", "b", "c", "deep"}
		if i < 2 {
			rankings[q] = []string{"gold-" + q, "hub", "twice", "twice", "a", "deep"}
		}
	}
	queries[0].Gold = append(queries[0].Gold, "hub")
	search := func(_ context.Context, q string, _ int) ([]string, error) { return rankings[q], nil }
	r, err := Run(context.Background(), queries, search, Options{Ks: []int{10}})
	if err != nil {
		t.Fatal(err)
	}
	h := r.Hubness
	want := []HubTool{{"a", 40, 1}, {"hub", 39, 39.0 / 40}, {"b", 38, 38.0 / 40}, {"c", 38, 38.0 / 40}, {"twice", 2, 2.0 / 40}}
	if h.Searches != 40 || !reflect.DeepEqual(h.Worst, want) || h.MaxShare != 1 {
		t.Fatalf("hubness %+v", h)
	}
	// every tool but "deep" is above 3% (twice: 2 of 40)
	if h.Hubs != 5 || h.SearchesWithHub != 1 {
		t.Fatalf("hubs %d, searches with a hub %v", h.Hubs, h.SearchesWithHub)
	}
	table := HubnessTable([]Row{{Label: "hybrid", Report: r}})
	if !strings.Contains(table, "| hybrid | 40 | 1.000 | 5 | 1.000 | a (40), hub (39), b (38) |") {
		t.Fatalf("table:\n%s", table)
	}
}

// A sibling of the right tool (the same server, the part of its name before "__") in the top
// 5 is a near miss: only a tool of another server counts in OtherServers.
func TestHubnessOfOtherServers(t *testing.T) {
	var queries []Query
	rankings := map[string][]string{}
	for i := range 20 {
		q := fmt.Sprintf("q%02d", i)
		queries = append(queries, Query{ID: q, Query: q, Gold: []string{"git__commit"}})
		// the sibling in every top 5; the weather tool and two tools named without a server
		// in the even ones, the calculator in the odd ones; below the cut-off, another
		rankings[q] = []string{"git__commit", "git__push", "calc"}
		if i%2 == 0 {
			rankings[q] = []string{"git__push", "weather__forecast", "git__commit", "x", "y", "noserver"}
		}
	}
	queries[0].Gold = []string{"calc"} // a gold without a server: only "calc" itself shares it
	search := func(_ context.Context, q string, _ int) ([]string, error) { return rankings[q], nil }
	r, err := Run(context.Background(), queries, search, Options{Ks: []int{10}})
	if err != nil {
		t.Fatal(err)
	}
	h := r.Hubness
	if h.Worst[0] != (HubTool{"git__push", 20, 1}) || h.OtherServers == nil {
		t.Fatalf("hubness %+v", h)
	}
	o := *h.OtherServers
	// the git tools count for the first search alone (its gold, calc, is of no server); calc
	// for the 10 odd ones; the weather tool, x and y for the 10 even ones
	want := []HubTool{{"calc", 10, 0.5}, {"weather__forecast", 10, 0.5}, {"x", 10, 0.5}, {"y", 10, 0.5},
		{"git__commit", 1, 1.0 / 20}, {"git__push", 1, 1.0 / 20}}
	if o.Searches != 20 || !reflect.DeepEqual(o.Worst, want) || o.Hubs != 6 || o.OtherServers != nil {
		t.Fatalf("other servers %+v", o)
	}
	table := HubnessTable([]Row{{Label: "hybrid", Report: r}})
	if !strings.Contains(table, "| 0.500 | 6 | 1.000 | calc (10), weather__forecast (10), x (10) |") {
		t.Fatalf("table:\n%s", table)
	}
}
