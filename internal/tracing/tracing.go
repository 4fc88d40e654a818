// Package tracing sets up OpenTelemetry tracing for toolgate: an OTLP/HTTP exporter when
// an endpoint is configured and a no-op tracer otherwise, plus span helpers for the calls
// worth seeing in a trace (model providers, MCP proxying). Nothing here touches the
// OpenTelemetry globals: the provider is passed to whoever traces.
package tracing

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// InstrumentationName names the tracer of toolgate's own spans.
const InstrumentationName = "github.com/toolgate/toolgate"

// Provider is the process's tracer provider and how to flush it at exit.
type Provider struct {
	trace.TracerProvider
	sdk *sdktrace.TracerProvider // nil when tracing is off
}

// Enabled reports whether spans are exported.
func (p *Provider) Enabled() bool { return p.sdk != nil }

// Shutdown flushes pending spans and stops the exporter; a no-op when tracing is off.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p.sdk == nil {
		return nil
	}
	return p.sdk.Shutdown(ctx)
}

// Disabled is the provider used when no endpoint is configured: every span is a no-op.
func Disabled() *Provider { return &Provider{TracerProvider: noop.NewTracerProvider()} }

// New returns Disabled() when endpoint is empty, else a provider exporting every span in
// batches over OTLP/HTTP to endpoint, a base URL such as http://collector:4318 (the
// traces path /v1/traces is appended, as for OTEL_EXPORTER_OTLP_ENDPOINT).
func New(ctx context.Context, endpoint, service, version string) (*Provider, error) {
	if endpoint == "" {
		return Disabled(), nil
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("OTLP endpoint %q: want http(s)://host:port", endpoint)
	}
	exp, err := otlptracehttp.New(ctx,
		otlptracehttp.WithEndpointURL(strings.TrimRight(endpoint, "/")+"/v1/traces"),
		otlptracehttp.WithTimeout(10*time.Second))
	if err != nil {
		return nil, fmt.Errorf("OTLP exporter: %w", err)
	}
	return NewWithExporter(exp, service, version), nil
}

// NewWithExporter is a provider batching spans to exp (tests pass an in-memory exporter).
func NewWithExporter(exp sdktrace.SpanExporter, service, version string) *Provider {
	res := resource.NewSchemaless(semconv.ServiceName(service), semconv.ServiceVersion(version))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Provider{TracerProvider: tp, sdk: tp}
}

// Propagator reads and writes W3C trace context and baggage headers.
func Propagator() propagation.TextMapPropagator {
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}

// noopSpan is the span a nil *Tracer starts: it records nothing.
var noopSpan = noop.Span{}

// Tracer starts toolgate's own spans. A nil *Tracer starts no-op spans.
type Tracer struct{ t trace.Tracer }

// NewTracer makes a Tracer on tp.
func NewTracer(tp trace.TracerProvider) *Tracer {
	return &Tracer{t: tp.Tracer(InstrumentationName)}
}

func (t *Tracer) start(ctx context.Context, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if t == nil {
		// Not the context's span: the caller sets attributes on and ends what it gets,
		// which must not touch its parent's span.
		return ctx, noopSpan
	}
	return t.t.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
}

// ProviderCall starts the client span of a call to a model provider, named
// "provider <operation>" (provider embed), with toolgate.provider and
// toolgate.operation attributes. End it with End.
func (t *Tracer) ProviderCall(ctx context.Context, provider, operation string) (context.Context, trace.Span) {
	return t.start(ctx, "provider "+operation, trace.SpanKindClient,
		attribute.String("toolgate.provider", provider), attribute.String("toolgate.operation", operation))
}

// MCPProxy starts the client span of a call proxied to an MCP source, named
// "mcp <method>" (mcp tools/call), with toolgate.source and toolgate.tool attributes.
// End it with End.
func (t *Tracer) MCPProxy(ctx context.Context, source, method, tool string) (context.Context, trace.Span) {
	return t.start(ctx, "mcp "+method, trace.SpanKindClient,
		attribute.String("toolgate.source", source), attribute.String("toolgate.tool", tool),
		attribute.String("rpc.method", method))
}

// End ends span, recording err (if any) as the span's error status.
func End(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// SQLTracer is a pgx query tracer making a span per query, batch and copy on tp
// (for postgres.WithQueryTracer). It returns nil when tracing is off, so that queries
// carry no tracing cost at all.
func (p *Provider) SQLTracer() pgx.QueryTracer {
	if !p.Enabled() {
		return nil
	}
	return otelpgx.NewTracer(otelpgx.WithTracerProvider(p.TracerProvider),
		otelpgx.WithMeterProvider(metricnoop.NewMeterProvider()))
}
