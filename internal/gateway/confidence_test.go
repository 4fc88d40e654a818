package gateway_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/gateway"
)

// find_tools says how sure it is: the answer's confidence and no_good_match, and each
// tool's confidence; a query that matches nothing is no good match, with its own hint.
func TestFindToolsConfidence(t *testing.T) {
	t.Parallel()
	e := setup(t, gateway.Options{})
	c := connectHTTP(t, serveGateway(t, e.g.HTTPHandler(), nil).URL)
	answer := func(query string) map[string]any {
		t.Helper()
		res := call(t, c, "find_tools", map[string]any{"query": query, "limit": 2})
		if res.IsError {
			t.Fatalf("find_tools(%q): %s", query, text(res))
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(text(res)), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := answer("latest stock price of a company")
	conf, ok := m["confidence"].(float64)
	if !ok || conf <= 0 || conf > 1 {
		t.Fatalf("confidence %v in %v", m["confidence"], m)
	}
	if _, ok := m["no_good_match"].(bool); !ok {
		t.Fatalf("no_good_match %v", m["no_good_match"])
	}
	tools := m["tools"].([]any)
	if tc, ok := tools[0].(map[string]any)["confidence"].(float64); !ok || tc <= 0 || tc > 1 {
		t.Fatalf("tool confidence %v", tools[0])
	}
	none := answer("zzqx qqwv")
	if none["confidence"] != 0.0 || none["no_good_match"] != true || none["hint"] == "" {
		t.Fatalf("gibberish: %v", none)
	}
}

// find_tools answers "why not X?": explain_tools names tools, and the answer says for each
// whether this search returned it, its rank and score, and why it was not returned; more
// names than a search may explain are refused as an invalid query.
func TestFindToolsExplainsTools(t *testing.T) {
	t.Parallel()
	e := setup(t, gateway.Options{})
	c := connectHTTP(t, serveGateway(t, e.g.HTTPHandler(), nil).URL)
	find := func(args map[string]any) map[string]any {
		t.Helper()
		res := call(t, c, "find_tools", args)
		if res.IsError {
			t.Fatalf("find_tools(%v): %s", args, text(res))
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(text(res)), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	const query = "email the stock price in a quarterly report"
	three := find(map[string]any{"query": query, "limit": 3})
	tools := three["tools"].([]any)
	if len(tools) != 3 {
		t.Fatalf("%d tools for %q, want 3", len(tools), query)
	}
	if _, ok := three["explained_tools"]; ok {
		t.Errorf("explained_tools without explain_tools: %v", three["explained_tools"])
	}
	first, third := tools[0].(map[string]any)["name"].(string), tools[2].(map[string]any)["name"].(string)
	m := find(map[string]any{"query": query, "limit": 1, "explain_tools": []string{third, "nosuch__tool", first}})
	explained, _ := m["explained_tools"].([]any)
	if len(explained) != 3 {
		t.Fatalf("explained_tools %v, want 3 answers", m["explained_tools"])
	}
	codes := func(x map[string]any) []string {
		var out []string
		for _, r := range x["reasons"].([]any) {
			out = append(out, r.(map[string]any)["code"].(string))
		}
		return out
	}
	got := explained[0].(map[string]any)
	if got["name"] != third || got["returned"] != false || got["rank"] != 3.0 || got["score"] == nil || !slices.Contains(codes(got), "below_k") {
		t.Errorf("the third tool with limit 1: %v, want not returned, rank 3, below_k", got)
	}
	if got := explained[1].(map[string]any); got["name"] != "nosuch__tool" || got["returned"] != false || got["rank"] != nil ||
		!slices.Equal(codes(got), []string{"not_found"}) {
		t.Errorf("a tool of no source: %v, want not_found", got)
	}
	if got := explained[2].(map[string]any); got["name"] != first || got["returned"] != true || got["rank"] != 1.0 {
		t.Errorf("the first tool: %v, want returned at rank 1", got)
	}

	many := make([]string, 11)
	for i := range many {
		many[i] = fmt.Sprintf("src__tool_%d", i)
	}
	if res := call(t, c, "find_tools", map[string]any{"query": query, "explain_tools": many}); !res.IsError ||
		!strings.Contains(text(res), "explain_tools") {
		t.Errorf("11 tools to explain: %s, want refused", text(res))
	}
}
