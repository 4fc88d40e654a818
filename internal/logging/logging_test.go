package logging_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/toolgate/toolgate/internal/logging"
)

func decode(t *testing.T, buf *bytes.Buffer) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatalf("log line %q: %v", buf.String(), err)
	}
	buf.Reset()
	return m
}

func TestHandlerAddsRequestID(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(logging.NewHandler(slog.NewJSONHandler(&buf, nil))).With("component", "api")

	ctx := logging.WithRequestID(context.Background(), "req-42")
	log.InfoContext(ctx, "hello", "n", 1)
	got := decode(t, &buf)
	if got["request_id"] != "req-42" || got["component"] != "api" || got["msg"] != "hello" {
		t.Fatalf("record = %v, want request_id req-42, component api", got)
	}

	log.WithGroup("g").InfoContext(ctx, "grouped", "k", "v")
	got = decode(t, &buf)
	if g, _ := got["g"].(map[string]any); g == nil || g["request_id"] != "req-42" {
		t.Fatalf("grouped record = %v, want request_id in group g", got)
	}

	log.Info("no context")
	got = decode(t, &buf)
	if _, ok := got["request_id"]; ok {
		t.Fatalf("record without context has request_id: %v", got)
	}
}

func TestHandlerAddsTraceIDs(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(logging.NewHandler(slog.NewJSONHandler(&buf, nil)))
	tp := sdktrace.NewTracerProvider()
	ctx, span := tp.Tracer("test").Start(context.Background(), "op")
	defer span.End()

	log.InfoContext(ctx, "in span")
	got := decode(t, &buf)
	if got["trace_id"] != span.SpanContext().TraceID().String() || got["span_id"] != span.SpanContext().SpanID().String() {
		t.Fatalf("record = %v, want trace_id %s", got, span.SpanContext().TraceID())
	}
}
