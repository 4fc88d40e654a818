package api

import (
	"context"
	"errors"
	"testing"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/search"
)

func TestSearchCost(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  search.Request
		want int
	}{
		{"plain", search.Request{Query: "q"}, 1},
		{"k 25", search.Request{Query: "q", K: 25}, 1},
		{"k 26", search.Request{Query: "q", K: 26}, 2},
		{"two variants", search.Request{Query: "q", Queries: []string{"r"}}, 2},
		{"explain", search.Request{Query: "q", Explain: true}, 2},
		{"explain_tools", search.Request{Query: "q", ExplainTools: []string{"t"}}, 3},
		{"heaviest", search.Request{Query: "q", Queries: make([]string, 7), K: 100, Explain: true, ExplainTools: []string{"t"}}, 35},
	} {
		if got := searchCost(tc.req); got != tc.want {
			t.Errorf("%s: cost %d, want %d", tc.name, got, tc.want)
		}
	}
	for body, want := range map[string]int{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"find_tools","arguments":{"query":"x"}}}`:            1,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"find_tools","arguments":{"query":"x","limit":50}}}`: 2,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"use_tool","arguments":{"query":"x"}}}`:              1,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"acme__get_price","arguments":{}}}`:                  0,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`:                                                                     0,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"find_tools"}}]`:                                    0,
	} {
		got, ok := mcpSearchCost([]byte(body))
		if got != want || ok != (want > 0) {
			t.Errorf("%s: cost %d %v, want %d", body, got, ok, want)
		}
	}
}

// TestFairShareWaits: over MCP a search over its key's share waits for units to come free
// (instead of a 429 at once), another key's share is its own, and a caller without a key
// has none to keep.
func TestFairShareWaits(t *testing.T) {
	ctx := context.Background()
	f := newFairShare(2)
	a, b := auth.Caller{KeyID: 1}, auth.Caller{KeyID: 2}
	heavy, err := f.acquire(ctx, a, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.acquire(ctx, a, 1, 0); err == nil {
		t.Fatal("a search over the share was let through")
	}
	other, err := f.acquire(ctx, b, 2, 0)
	if err != nil {
		t.Fatalf("another key: %v", err)
	}
	other()
	if _, err := f.acquire(ctx, auth.Caller{}, 100, 0); err != nil {
		t.Fatalf("a caller without a key: %v", err)
	}
	got := make(chan error, 1)
	go func() {
		release, err := f.acquire(ctx, a, 1, mcpShareWait)
		if err == nil {
			release()
		}
		got <- err
	}()
	heavy()
	if err := <-got; err != nil {
		t.Fatalf("the waiting search: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	full, _ := f.acquire(ctx, a, 2, 0)
	cancel()
	if _, err := f.acquire(cancelled, a, 1, mcpShareWait); !errors.Is(err, context.Canceled) {
		t.Fatalf("a waiting search whose caller left: %v", err)
	}
	full()
}
