package logging_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
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

// River's INFO chatter is logged at DEBUG: gone at level INFO, there at DEBUG; its
// warnings stay.
func TestDemotedHidesInfoAtInfoLevel(t *testing.T) {
	for _, tc := range []struct {
		level slog.Level
		want  []string
	}{
		{slog.LevelInfo, []string{"level=WARN msg=stuck"}},
		{slog.LevelDebug, []string{"level=DEBUG msg=\"job counts\"", "level=WARN msg=stuck"}},
	} {
		var buf bytes.Buffer
		log := slog.New(logging.Demoted(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tc.level,
			ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			}}))).With("component", "river")
		log.Info("job counts")
		log.Warn("stuck")
		got := strings.Split(strings.TrimSpace(buf.String()), "\n")
		for i := range got {
			got[i] = strings.TrimSuffix(got[i], " component=river")
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("at %s: %q, want %q", tc.level, got, tc.want)
		}
	}
}
