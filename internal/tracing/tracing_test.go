package tracing_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolgate/toolgate/internal/tracing"
)

func TestOffWithoutEndpoint(t *testing.T) {
	p, err := tracing.New(context.Background(), "", "toolgate", "test")
	if err != nil {
		t.Fatal(err)
	}
	if p.Enabled() || p.SQLTracer() != nil {
		t.Fatal("tracing is on without an endpoint")
	}
	_, span := p.Tracer("x").Start(context.Background(), "op")
	if span.SpanContext().IsValid() {
		t.Fatal("disabled provider made a recording span")
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestBadEndpoint(t *testing.T) {
	for _, ep := range []string{"collector:4318", "ftp://x", "http://"} {
		if _, err := tracing.New(context.Background(), ep, "toolgate", "test"); err == nil {
			t.Errorf("endpoint %q accepted", ep)
		}
	}
}

// TestExportsOverOTLPHTTP checks the wire: spans are POSTed as protobuf to
// <endpoint>/v1/traces.
func TestExportsOverOTLPHTTP(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/traces" && r.Header.Get("Content-Type") == "application/x-protobuf" {
			posts.Add(1)
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()

	p, err := tracing.New(context.Background(), srv.URL+"/", "toolgate", "test")
	if err != nil {
		t.Fatal(err)
	}
	if !p.Enabled() || p.SQLTracer() == nil {
		t.Fatal("tracing is off with an endpoint")
	}
	ctx, span := tracing.NewTracer(p).ProviderCall(context.Background(), "openai", "embed")
	if !span.SpanContext().IsValid() || ctx == nil {
		t.Fatal("no recording span")
	}
	tracing.End(span, nil)
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if posts.Load() == 0 {
		t.Fatal("no OTLP export reached the collector")
	}
}

// A nil Tracer's spans must not be the caller's: ending one (as every helper's caller
// does) would end, or set the error of, the caller's own span.
func TestNilTracerLeavesParentAlone(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	ctx, parent := tp.Tracer("test").Start(context.Background(), "parent")
	var tr *tracing.Tracer
	_, span := tr.ProviderCall(ctx, "openai", "embed")
	span.SetAttributes(attribute.Int("toolgate.attempts", 3))
	tracing.End(span, errors.New("boom"))
	if len(exp.GetSpans()) != 0 {
		t.Fatal("ending a nil tracer's span ended the caller's span")
	}
	parent.End()
	got := exp.GetSpans()
	if len(got) != 1 || got[0].Status.Code != codes.Unset || len(got[0].Attributes) != 0 {
		t.Fatalf("the caller's span was changed: %+v", got)
	}
}
