package gateway_test

import (
	"encoding/json"
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
