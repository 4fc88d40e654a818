package provider_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/llm"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/rerank"
	"github.com/toolgate/toolgate/internal/tracing"
)

// keepSpans is an in-memory exporter whose Shutdown keeps the spans for the test to read.
type keepSpans struct{ *tracetest.InMemoryExporter }

func (keepSpans) Shutdown(context.Context) error { return nil }

// fakeOpenAI speaks the OpenAI wire format: /v1/embeddings answers 503 to its first
// request, then vectors with usage; /v1/chat/completions always answers 500; /v1/rerank
// answers results naming an index that does not exist.
func fakeOpenAI(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var embedCalls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/embeddings":
			if embedCalls.Add(1) == 1 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			var req struct{ Input []string }
			_ = json.NewDecoder(r.Body).Decode(&req)
			data := []map[string]any{}
			for i := range req.Input {
				data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": []float32{1, 0, 0}})
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": "e",
				"usage": map[string]int{"prompt_tokens": 11, "total_tokens": 11}})
		case "/v1/chat/completions":
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"error":{"message":"boom","type":"server_error"}}`))
		case "/v1/rerank":
			_, _ = w.Write([]byte(`{"results":[{"index":7,"relevance_score":0.9}]}`))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &embedCalls
}

func TestObserverRecordsLogicalCalls(t *testing.T) {
	t.Parallel()
	srv, embedCalls := fakeOpenAI(t)
	m := metrics.New()
	exp := keepSpans{tracetest.NewInMemoryExporter()}
	tp := tracing.NewWithExporter(exp, "toolgate-test", "test")
	obs := &provider.Observer{Metrics: m, Tracer: tracing.NewTracer(tp)}
	pcfg := provider.Config{BaseURL: srv.URL + "/v1", Retries: 2, BaseBackoff: time.Millisecond, Observer: obs}

	ctx, parent := tp.Tracer("test").Start(context.Background(), "enrich job")
	e := embed.NewOpenAI(embed.OpenAIConfig{Provider: pcfg, Model: "e", Dims: 3})
	if _, err := e.Embed(ctx, []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	chat := llm.New(llm.Config{Provider: pcfg, Model: "c"})
	_, err := chat.Complete(ctx, []llm.Message{{Role: "user", Content: "hi"}}, true)
	var pe *provider.ProviderError
	if !errors.As(err, &pe) || pe.Status != 500 {
		t.Fatalf("chat: want a 500 ProviderError, got %v", err)
	}
	rr, err := rerank.NewHTTP(srv.URL+"/v1/rerank", "", "r", rerank.StyleCohere, nil, obs)
	if err != nil {
		t.Fatal(err)
	}
	_, err = rr.Rerank(ctx, "q", []rerank.Doc{{Text: "x"}}, 1)
	var me *rerank.MalformedError
	if !errors.As(err, &me) {
		t.Fatalf("rerank: want MalformedError, got %v", err)
	}
	parent.End()
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if embedCalls.Load() != 2 {
		t.Fatalf("embeddings answered %d requests, want 2 (a 503, then the answer)", embedCalls.Load())
	}

	// Metrics: one call per logical call whatever its attempts, one error per failed call,
	// the tokens the provider reported; the label is the host of the base URL.
	host := strings.TrimPrefix(srv.URL, "http://")
	out := scrape(t, m)
	for _, want := range []string{
		`toolgate_provider_calls_total{operation="embed",provider="` + host + `"} 1`,
		`toolgate_provider_tokens_total{operation="embed",provider="` + host + `"} 11`,
		`toolgate_provider_call_duration_seconds_count{operation="embed",provider="` + host + `"} 1`,
		`toolgate_provider_calls_total{operation="chat",provider="` + host + `"} 1`,
		`toolgate_provider_errors_total{operation="chat",provider="` + host + `"} 1`,
		`toolgate_provider_calls_total{operation="rerank",provider="` + host + `"} 1`,
		`toolgate_provider_errors_total{operation="rerank",provider="` + host + `"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s", want)
		}
	}
	if strings.Contains(out, `toolgate_provider_errors_total{operation="embed"`) {
		t.Error("a call that succeeded on retry counted an error")
	}
	t.Logf("scraped:\n%s", grepLines(out, "toolgate_provider_"))

	// Spans: one client span per logical call, child of the caller's span, with the
	// attempts, tokens and error.
	spans := map[string]tracetest.SpanStub{}
	for _, s := range exp.GetSpans() {
		spans[s.Name] = s
	}
	if len(spans) != 4 {
		t.Fatalf("got spans %v, want enrich job and three provider spans", keys(spans))
	}
	for _, c := range []struct {
		name     string
		attempts int64
		tokens   int64
		failed   bool
	}{
		{"provider embed", 2, 11, false},
		{"provider chat", 3, 0, true},
		{"provider rerank", 1, 0, true},
	} {
		s, ok := spans[c.name]
		if !ok {
			t.Errorf("no %q span", c.name)
			continue
		}
		if s.SpanKind != trace.SpanKindClient || s.Parent.SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("%s: kind %v parent %s, want a client span under the caller's", c.name, s.SpanKind, s.Parent.SpanID())
		}
		attrs := attribute.NewSet(s.Attributes...)
		if v, _ := attrs.Value("toolgate.provider"); v.AsString() != host {
			t.Errorf("%s: toolgate.provider %q, want %q", c.name, v.AsString(), host)
		}
		if v, _ := attrs.Value("toolgate.attempts"); v.AsInt64() != c.attempts {
			t.Errorf("%s: attempts %d, want %d", c.name, v.AsInt64(), c.attempts)
		}
		if v, _ := attrs.Value("toolgate.tokens"); v.AsInt64() != c.tokens {
			t.Errorf("%s: tokens %d, want %d", c.name, v.AsInt64(), c.tokens)
		}
		if failed := s.Status.Code == codes.Error; failed != c.failed {
			t.Errorf("%s: status %+v, want failed=%v", c.name, s.Status, c.failed)
		}
	}
}

// A bad answer shape is the call's failure, and the tokens it billed still count.
func TestObserverCountsRejectedAnswers(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[1,0]}],"usage":{"prompt_tokens":4,"total_tokens":4}}`))
	}))
	defer srv.Close()
	m := metrics.New()
	e := embed.NewOpenAI(embed.OpenAIConfig{Model: "e", Dims: 3, Provider: provider.Config{BaseURL: srv.URL + "/v1",
		Name: "local-tei", Observer: &provider.Observer{Metrics: m}}})
	_, err := e.Embed(context.Background(), []string{"a"})
	var br *provider.BadResponseError
	if !errors.As(err, &br) {
		t.Fatalf("want BadResponseError, got %v", err)
	}
	out := scrape(t, m)
	for _, want := range []string{
		`toolgate_provider_calls_total{operation="embed",provider="local-tei"} 1`,
		`toolgate_provider_errors_total{operation="embed",provider="local-tei"} 1`,
		`toolgate_provider_tokens_total{operation="embed",provider="local-tei"} 4`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s in\n%s", want, grepLines(out, "toolgate_provider_"))
		}
	}
}

func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

func grepLines(s, prefix string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) && !strings.Contains(l, "_bucket") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func keys(m map[string]tracetest.SpanStub) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
