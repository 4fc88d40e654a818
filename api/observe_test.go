package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/logging"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/tracing"
)

func opsDo(t *testing.T, h http.Handler, method, target string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, "http://localhost"+target, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// scrape returns the /metrics exposition of h.
func scrape(t *testing.T, h http.Handler) string {
	t.Helper()
	rec := opsDo(t, h, http.MethodGet, "/metrics", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

func wantLines(t *testing.T, exposition string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(exposition, l) {
			t.Errorf("/metrics lacks %q", l)
		}
	}
	if t.Failed() {
		t.Logf("exposition:\n%s", exposition)
	}
}

func TestMetricsCountRequestsByRouteTemplate(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	m := metrics.New()
	m.WatchPool("primary", pool)
	e := api.New(api.Deps{Pool: pool, Logger: slog.New(slog.DiscardHandler), Metrics: m, Open: true})

	for range 2 {
		if rec := opsDo(t, e, http.MethodGet, "/healthz", nil); rec.Code != http.StatusOK {
			t.Fatalf("healthz: %d", rec.Code)
		}
	}
	opsDo(t, e, http.MethodPut, "/v1/sources/no-such-source/tools", nil)
	opsDo(t, e, http.MethodGet, "/nowhere/at/all", nil)
	opsDo(t, e, "FOO1", "/healthz", nil) // a made-up method must not mint a label value
	e.GET("/boom", func(echo.Context) error { panic("boom") })
	if rec := opsDo(t, e, http.MethodGet, "/boom", nil); rec.Code != http.StatusInternalServerError {
		t.Fatalf("panicking route: %d", rec.Code)
	}
	if rec := opsDo(t, e, http.MethodGet, "/readyz", nil); rec.Code != http.StatusOK {
		t.Fatalf("readyz: %d %s", rec.Code, rec.Body)
	}

	out := scrape(t, e)
	wantLines(t, out,
		`toolgate_http_requests_total{method="GET",route="/healthz",status="200"} 2`,
		`toolgate_http_request_duration_seconds_count{method="GET",route="/healthz",status="200"} 2`,
		`route="/v1/sources/:name/tools"`,
		`toolgate_db_pool_max_conns{pool="primary"}`,
		`toolgate_http_requests_total{method="GET",route="/boom",status="500"} 1`,
		`method="other"`,
		`toolgate_db_pool_acquires_total{pool="primary"}`,
		`go_goroutines`,
	)
	if strings.Contains(out, "FOO1") {
		t.Error("a made-up method became a label value")
	}
	if strings.Contains(out, "/nowhere") {
		t.Error("an unknown path became a label value")
	}
}

func TestAccessLogCarriesRequestID(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil)) // api wraps it with the request-id handler
	e := api.New(api.Deps{Pool: pgtest.NewPool(t), Logger: log, Open: true})

	rec := opsDo(t, e, http.MethodGet, "/v1/sources", http.Header{"X-Request-Id": {"req-abc"}})
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /v1/sources: %d %s", rec.Code, rec.Body)
	}
	if got := rec.Header().Get("X-Request-Id"); got != "req-abc" {
		t.Fatalf("response request id = %q", got)
	}
	var found bool
	for line := range strings.SplitSeq(strings.TrimSpace(buf.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["msg"] == "request" {
			found = true
			if rec["request_id"] != "req-abc" || rec["route"] != "/v1/sources" || rec["status"] != float64(200) ||
				rec["level"] != "INFO" || rec["duration_ms"] == nil {
				t.Errorf("access log = %v", rec)
			}
		}
	}
	if !found {
		t.Fatalf("no access log line in %s", buf.String())
	}
}

// keepSpans is an in-memory exporter whose Shutdown keeps the spans for the test to read.
type keepSpans struct{ *tracetest.InMemoryExporter }

func (keepSpans) Shutdown(context.Context) error { return nil }

func TestTracingCoversHTTPAndSQL(t *testing.T) {
	t.Parallel()
	exp := keepSpans{tracetest.NewInMemoryExporter()}
	tp := tracing.NewWithExporter(exp, "toolgate-test", "test")
	pool, err := postgres.Connect(context.Background(), pgtest.NewDB(t), postgres.WithQueryTracer(tp.SQLTracer()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	var logs bytes.Buffer
	e := api.New(api.Deps{Pool: pool, Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), Tracing: tp, Open: true})

	// An incoming W3C trace context is continued.
	const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	if rec := opsDo(t, e, http.MethodGet, "/readyz", http.Header{"Traceparent": {parent}}); rec.Code != http.StatusOK {
		t.Fatalf("readyz: %d %s", rec.Code, rec.Body)
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	spans := exp.GetSpans()
	var httpSpan *tracetest.SpanStub
	for i := range spans {
		if spans[i].SpanKind == trace.SpanKindServer {
			httpSpan = &spans[i]
		}
	}
	if httpSpan == nil || httpSpan.Name != "GET /readyz" {
		t.Fatalf("no server span GET /readyz among %d spans", len(spans))
	}
	if got := httpSpan.SpanContext.TraceID().String(); got != "0af7651916cd43dd8448eb211c80319c" {
		t.Errorf("server span trace id %s does not continue the caller's", got)
	}
	var sqlSpans int
	for _, s := range spans {
		if s.SpanKind == trace.SpanKindClient && s.Parent.SpanID() == httpSpan.SpanContext.SpanID() {
			for _, a := range s.Attributes {
				if a.Key == "db.query.text" || a.Key == "db.statement" {
					sqlSpans++
				}
			}
		}
	}
	if sqlSpans == 0 {
		for _, s := range spans {
			t.Logf("span %q kind %v parent %s attrs %v", s.Name, s.SpanKind, s.Parent.SpanID(), s.Attributes)
		}
		t.Fatal("no SQL span under the request's span")
	}
	// The access log line carries the trace id.
	if !strings.Contains(logs.String(), `"trace_id":"0af7651916cd43dd8448eb211c80319c"`) {
		t.Errorf("access log lacks the trace id: %s", logs.String())
	}
}

func TestTracerHelpersNoopWhenNil(t *testing.T) {
	t.Parallel()
	var tr *tracing.Tracer
	ctx, span := tr.ProviderCall(context.Background(), "openai", "embed")
	tracing.End(span, io.EOF)
	if span.SpanContext().IsValid() || ctx == nil {
		t.Fatal("a nil tracer made a real span")
	}

	exp := keepSpans{tracetest.NewInMemoryExporter()}
	tp := tracing.NewWithExporter(exp, "toolgate-test", "test")
	tr = tracing.NewTracer(tp)
	ctx, span = tr.MCPProxy(logging.WithRequestID(context.Background(), "r1"), "github", "tools/call", "create_issue")
	_, child := tr.ProviderCall(ctx, "openai", "embed")
	tracing.End(child, io.ErrUnexpectedEOF)
	tracing.End(span, nil)
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("got %d spans, want 2", len(spans))
	}
	byName := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		byName[s.Name] = s
	}
	p, m := byName["provider embed"], byName["mcp tools/call"]
	if p.Parent.SpanID() != m.SpanContext.SpanID() {
		t.Error("provider span is not a child of the MCP span")
	}
	if p.Status.Description != io.ErrUnexpectedEOF.Error() || len(p.Events) != 1 {
		t.Errorf("provider span status %+v events %d, want the error recorded", p.Status, len(p.Events))
	}
}
