package api_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/tracing"
)

// BenchmarkRequestObservability measures what the request middleware (request id in the
// context, metrics, access log, and tracing when on) costs per request, on GET /healthz
// (no database work): bare Echo against api.New with tracing off and on.
func BenchmarkRequestObservability(b *testing.B) {
	pool := pgtest.NewPool(b)
	log := slog.New(slog.DiscardHandler)
	bare := echo.New()
	bare.GET("/healthz", func(c echo.Context) error { return c.JSON(http.StatusOK, map[string]string{"status": "ok"}) })
	tp := tracing.NewWithExporter(keepSpans{tracetest.NewInMemoryExporter()}, "bench", "bench")
	b.Cleanup(func() { _ = tp.Shutdown(b.Context()) })
	for _, bc := range []struct {
		name string
		h    http.Handler
	}{
		{"bare-echo", bare},
		{"tracing-off", api.New(api.Deps{Pool: pool, Logger: log})},
		{"tracing-on", api.New(api.Deps{Pool: pool, Logger: log, Tracing: tp})},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				bc.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d", rec.Code)
				}
			}
		})
	}
}
