package gateway_test

import (
	"testing"

	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/gateway"
)

// BenchmarkFindTools is one find_tools round trip over Streamable HTTP with keyword
// retrieval on the 300-tool demo catalog plus the upstream's tools, binding included.
func BenchmarkFindTools(b *testing.B) {
	e := setup(b, gateway.Options{CallTool: true})
	addSource(b, e.pool, "demo", "catalog", map[string]any{}, dataset.Tools(dataset.DemoCompanies))
	c := connectHTTP(b, serveGateway(b, e.g.HTTPHandler(), nil).URL)
	for b.Loop() {
		if out := find(b, c, "stock price history", 5); len(out.Tools) == 0 {
			b.Fatal("no tools found")
		}
	}
}

// BenchmarkProxiedCall is one call of a bound tool over Streamable HTTP: lookup,
// argument validation and tools/call on the pooled upstream session (also Streamable HTTP).
func BenchmarkProxiedCall(b *testing.B) {
	e := setup(b, gateway.Options{CallTool: true})
	c := connectHTTP(b, serveGateway(b, e.g.HTTPHandler(), nil).URL)
	find(b, c, "stock price", 1)
	args := map[string]any{"symbol": "ACME"}
	for b.Loop() {
		if res := call(b, c, "market__get_stock_price", args); res.IsError {
			b.Fatal(text(res))
		}
	}
}
