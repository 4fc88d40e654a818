package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/gateway"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/tracing"
)

// keepSpans is an in-memory exporter whose Shutdown keeps the spans for the test to read.
type keepSpans struct{ *tracetest.InMemoryExporter }

func (keepSpans) Shutdown(context.Context) error { return nil }

// TestProxiedCallsAreTracedAndCounted calls a tool of a live source and one of a dead
// source through the Streamable HTTP handler behind a server span per request (as the
// API's tracing middleware makes), and checks the "mcp tools/call" spans, their parents
// and the toolgate_mcp_proxy_* series.
func TestProxiedCallsAreTracedAndCounted(t *testing.T) {
	t.Parallel()
	exp := keepSpans{tracetest.NewInMemoryExporter()}
	tp := tracing.NewWithExporter(exp, "toolgate-test", "test")
	m := metrics.New()
	e := setup(t, gateway.Options{CallTool: true, Tracer: tracing.NewTracer(tp), Metrics: m})
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	addSource(t, e.pool, "offline", "mcp_http", map[string]any{"url": deadURL}, []catalog.Tool{
		{Name: "get_weather", Description: "Get the weather forecast for a city", InputSchema: emptySchema},
	})

	// carriers maps "<JSON-RPC method> <call_tool's name argument>" to the server span of
	// the HTTP request that carried it.
	var mu sync.Mutex
	carriers := map[string]trace.SpanContext{}
	inner := e.g.HTTPHandler()
	server := tp.Tracer("test-http")
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string
			Params struct{ Arguments struct{ Name string } }
		}
		_ = json.Unmarshal(body, &msg)
		ctx, span := server.Start(r.Context(), r.Method+" /mcp", trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		mu.Lock()
		carriers[strings.TrimSpace(msg.Method+" "+msg.Params.Arguments.Name)] = span.SpanContext()
		mu.Unlock()
		inner.ServeHTTP(w, r.WithContext(ctx))
	})
	c := connectHTTP(t, serveGateway(t, h, nil).URL)

	res := call(t, c, "call_tool", map[string]any{"name": "market__get_stock_price", "arguments": map[string]any{"symbol": "ACME"}})
	if res.IsError {
		t.Fatalf("proxied call failed: %s", text(res))
	}
	wantToolError(t, call(t, c, "call_tool", map[string]any{"name": "offline__get_weather", "arguments": map[string]any{}}), gateway.CodeUpstreamError)
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	byTool := map[string]tracetest.SpanStub{}
	for _, s := range exp.GetSpans() {
		if s.Name == "mcp tools/call" {
			attrs := attribute.NewSet(s.Attributes...)
			tool, _ := attrs.Value("toolgate.tool")
			byTool[tool.AsString()] = s
		}
	}
	if len(byTool) != 2 {
		t.Fatalf("got mcp tools/call spans for %v, want the two proxied tools", byTool)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, c := range []struct {
		tool, source string
		failed       bool
	}{
		{"market__get_stock_price", "market", false},
		{"offline__get_weather", "offline", true},
	} {
		s := byTool[c.tool]
		attrs := attribute.NewSet(s.Attributes...)
		if v, _ := attrs.Value("toolgate.source"); v.AsString() != c.source || s.SpanKind != trace.SpanKindClient {
			t.Errorf("%s: source %q kind %v, want %q and a client span", c.tool, v.AsString(), s.SpanKind, c.source)
		}
		if v, _ := attrs.Value("rpc.method"); v.AsString() != "tools/call" {
			t.Errorf("%s: rpc.method %q", c.tool, v.AsString())
		}
		if failed := s.Status.Code == codes.Error; failed != c.failed {
			t.Errorf("%s: status %+v, want failed=%v", c.tool, s.Status, c.failed)
		}
		// The parent is the span of the request carrying the call, not that of the
		// initialize request that opened the session.
		carrier := carriers["tools/call "+c.tool]
		if s.Parent.SpanID() != carrier.SpanID() || s.SpanContext.TraceID() != carrier.TraceID() {
			t.Errorf("%s: parent %s in trace %s, want the carrying request's span %s in trace %s (initialize was %s)",
				c.tool, s.Parent.SpanID(), s.SpanContext.TraceID(), carrier.SpanID(), carrier.TraceID(), carriers["initialize"].SpanID())
		}
	}

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	out := rec.Body.String()
	for _, want := range []string{
		`toolgate_mcp_proxy_calls_total{outcome="ok",source="market"} 1`,
		`toolgate_mcp_proxy_calls_total{outcome="error",source="offline"} 1`,
		`toolgate_mcp_proxy_duration_seconds_count{source="market"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s", want)
		}
	}
}
