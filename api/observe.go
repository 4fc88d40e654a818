package api

import (
	"log/slog"
	"time"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/contrib/instrumentation/github.com/labstack/echo/otelecho"

	"github.com/toolgate/toolgate/internal/logging"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/tracing"
)

// instrument fills in the optional observability dependencies (a fresh metrics registry,
// tracing off), installs the middleware that traces, counts
// and logs every request, and serves GET /metrics.
func (s *Server) instrument(e *echo.Echo) {
	if s.deps.Metrics == nil {
		s.deps.Metrics = metrics.New()
	}
	if s.deps.Tracing == nil {
		s.deps.Tracing = tracing.Disabled()
	}
	s.log = logging.Wrap(s.log)
	if s.deps.Tracing.Enabled() {
		e.Use(otelecho.Middleware("toolgate",
			otelecho.WithTracerProvider(s.deps.Tracing), otelecho.WithPropagators(tracing.Propagator())))
	}
	e.Use(s.observeRequests)
	e.GET("/metrics", echo.WrapHandler(s.deps.Metrics.Handler()))
}

// observeRequests puts the request id into the request's context (so that handlers
// logging with it log the id), counts and times the request by route template, and
// writes the access log line: at Info, except for scrapes and health checks (Debug).
func (s *Server) observeRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		req := c.Request()
		ctx := logging.WithRequestID(req.Context(), c.Response().Header().Get(echo.HeaderXRequestID))
		c.SetRequest(req.WithContext(ctx))
		if err := next(c); err != nil {
			c.Error(err)
		}
		d := time.Since(start)
		route := c.Path()
		if route == "" {
			route = "unmatched" // keeps unknown paths from minting label values
		}
		status := c.Response().Status
		s.deps.Metrics.ObserveHTTP(route, req.Method, status, d)
		level := slog.LevelInfo
		switch route {
		case "/metrics", "/healthz", "/readyz":
			level = slog.LevelDebug
		}
		s.log.LogAttrs(ctx, level, "request", slog.String("method", req.Method), slog.String("route", route),
			slog.Int("status", status), slog.Float64("duration_ms", float64(d.Microseconds())/1000))
		return nil
	}
}
