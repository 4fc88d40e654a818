// Package logging carries a request id in a context and adds it, with the trace and span
// ids of an active OpenTelemetry span, to every slog record logged with that context.
package logging

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

type requestIDKey struct{}

// WithRequestID returns ctx carrying the request id id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID is the request id carried by ctx, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// Handler wraps a slog.Handler: records logged with a context (log.InfoContext(ctx, ...))
// get request_id when the context carries one, and trace_id and span_id when it carries
// a recording span.
type Handler struct{ inner slog.Handler }

// NewHandler wraps inner.
func NewHandler(inner slog.Handler) *Handler { return &Handler{inner: inner} }

// Enabled implements slog.Handler.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

// Handle implements slog.Handler.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.inner.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &Handler{inner: h.inner.WithAttrs(attrs)}
}

// WithGroup implements slog.Handler.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{inner: h.inner.WithGroup(name)}
}

// Wrap returns log with its handler wrapped in a Handler, or log itself when it already is.
func Wrap(log *slog.Logger) *slog.Logger {
	if _, ok := log.Handler().(*Handler); ok {
		return log
	}
	return slog.New(NewHandler(log.Handler()))
}

// Demoted wraps inner so that its INFO records are logged at DEBUG: a library's routine
// chatter (River's periodic job counts, each retry) stays out of an operator's INFO log
// while its warnings and errors stay in.
func Demoted(inner slog.Handler) slog.Handler { return demoted{inner: inner} }

type demoted struct{ inner slog.Handler }

func (d demoted) level(l slog.Level) slog.Level {
	if l == slog.LevelInfo {
		return slog.LevelDebug
	}
	return l
}

func (d demoted) Enabled(ctx context.Context, l slog.Level) bool {
	return d.inner.Enabled(ctx, d.level(l))
}

func (d demoted) Handle(ctx context.Context, r slog.Record) error {
	r.Level = d.level(r.Level)
	return d.inner.Handle(ctx, r)
}

func (d demoted) WithAttrs(attrs []slog.Attr) slog.Handler {
	return demoted{inner: d.inner.WithAttrs(attrs)}
}

func (d demoted) WithGroup(name string) slog.Handler { return demoted{inner: d.inner.WithGroup(name)} }
