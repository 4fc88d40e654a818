// Package api is toolgate's HTTP interface: an Echo server with the REST endpoints, their
// JSON error bodies and the health checks.
package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/search"
)

// Deps is what the handlers use.
type Deps struct {
	Pool   *pgxpool.Pool
	River  *river.Client[pgx.Tx]
	Logger *slog.Logger
	Search *search.Service // POST /search; nil answers 500
}

// Server holds the handlers' dependencies.
type Server struct {
	deps Deps
	log  *slog.Logger
}

// maxBody bounds a request body (a whole catalog may be pushed in one request).
const maxBody = "64M"

// New builds the Echo instance with every route registered.
func New(deps Deps) *echo.Echo {
	s := &Server{deps: deps, log: deps.Logger.With("component", "api")}
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = errorHandler(s.log)
	e.Use(middleware.RequestID())
	e.Use(middleware.Recover())
	e.Use(middleware.BodyLimit(maxBody))
	e.Use(s.logRequests)

	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)

	v1 := e.Group("/v1")
	s.registerSources(v1)
	s.registerSearch(e)
	return e
}

// NewHealthOnly is the server of a worker-only process: /healthz and /readyz.
func NewHealthOnly(deps Deps) *echo.Echo {
	s := &Server{deps: deps, log: deps.Logger.With("component", "api")}
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = errorHandler(s.log)
	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	return e
}

func (s *Server) logRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		s.log.Debug("request", "request_id", c.Response().Header().Get(echo.HeaderXRequestID),
			"method", c.Request().Method, "route", c.Path(), "status", c.Response().Status,
			"duration_ms", float64(time.Since(start).Microseconds())/1000)
		return nil
	}
}

// healthz answers as long as the process serves HTTP.
func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 200 when the database is reachable, migrated and has pgvector.
func (s *Server) readyz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 3*time.Second)
	defer cancel()
	if err := postgres.Ready(ctx, s.deps.Pool); err != nil {
		return c.JSON(http.StatusServiceUnavailable, map[string]any{
			"status": "unavailable",
			"error":  map[string]string{"code": "not_ready", "message": err.Error()},
		})
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
}
