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

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/postgres"
)

// Deps is what the handlers use.
type Deps struct {
	Pool   *pgxpool.Pool
	River  *river.Client[pgx.Tx]
	Logger *slog.Logger
	// Keys verifies API keys; nil means a store on Pool with the real clock.
	Keys *auth.Keys
	// Open lets every request through as the admin caller "open" (TOOLGATE_OPEN).
	Open bool
}

// Server holds the handlers' dependencies.
type Server struct {
	deps Deps
	log  *slog.Logger
	keys *auth.Keys
}

// maxBody bounds a request body (a whole catalog may be pushed in one request).
const maxBody = "64M"

// New builds the Echo instance with every route registered.
func New(deps Deps) *echo.Echo {
	s := &Server{deps: deps, log: deps.Logger.With("component", "api"), keys: newKeys(deps)}
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = errorHandler(s.log)
	e.Use(middleware.RequestID())
	e.Use(middleware.Recover())
	e.Use(middleware.BodyLimit(maxBody))
	e.Use(s.logRequests)
	e.Use(s.authenticate)
	s.warnOpenMode()

	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	e.GET("/openapi.json", s.openAPI)

	v1 := e.Group("/v1")
	s.registerSources(v1)
	s.registerTools(v1)
	s.registerAdmin(e.Group("/admin"))
	s.registerProfiles(e.Group("/admin"))
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
