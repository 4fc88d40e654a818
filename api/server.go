// Package api is toolgate's HTTP interface: an Echo server with the REST endpoints, their
// JSON error bodies and the health checks.
package api

import (
	"cmp"
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
	"github.com/toolgate/toolgate/internal/gateway"
	"github.com/toolgate/toolgate/internal/httpguard"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/oauth"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/internal/tracing"
	"github.com/toolgate/toolgate/internal/upstreamauth"
	"github.com/toolgate/toolgate/jobs"
)

// Deps is what the handlers use.
type Deps struct {
	Pool *pgxpool.Pool
	// ReadPool is the read replica searches run on (DATABASE_READ_URL); nil when none.
	// /readyz checks it too.
	ReadPool *pgxpool.Pool
	// ControlPool and ControlReadPool are small pools of their own on the primary and the
	// replica (TOOLGATE_DB_CONTROL_CONNS) for the key lookups of authentication and for
	// /readyz, so that both answer while searches hold every connection of Pool and
	// ReadPool (docs/auth.md#fair-share); nil means Pool and ReadPool.
	ControlPool     *pgxpool.Pool
	ControlReadPool *pgxpool.Pool
	River           *river.Client[pgx.Tx]
	Logger          *slog.Logger
	// Metrics is the process's registry, served at /metrics; nil makes a fresh one.
	Metrics *metrics.Metrics
	// Tracing exports spans of requests; nil means tracing is off.
	Tracing *tracing.Provider
	// Keys verifies API keys; nil means a store on Pool with the real clock.
	Keys *auth.Keys
	// OAuth accepts access tokens of the configured authorization servers beside API keys
	// (TOOLGATE_OAUTH_ISSUERS, docs/auth.md#oauth); nil: API keys only.
	OAuth *oauth.Verifier
	// Open lets every request through as the admin caller "open" (TOOLGATE_OPEN).
	Open bool
	// CORSOrigins are the web origins whose pages may call the search routes (/mcp,
	// POST /search…) from a browser with their user's key or token (TOOLGATE_CORS_ORIGINS,
	// docs/auth.md#browser-clients); none: no cross-origin request is taken.
	CORSOrigins httpguard.Origins
	// Commands are the programs an mcp_stdio source may run (TOOLGATE_STDIO_COMMANDS): a
	// source created or changed to run anything else is refused with 403. The zero value
	// allows none.
	Commands mcpclient.CommandPolicy
	// Gateway serves MCP at /mcp and GET /v1/capabilities; nil leaves them out.
	Gateway *gateway.Gateway
	Search  *search.Service // POST /search; nil answers 500
	// AbandonedAfter is how long after its attempt began a running job of a kind has
	// certainly been abandoned by its process (jobs.Deps.AbandonedAfter of the workers'
	// settings): the admin API then retries or cancels it at once. Nil: the default timeouts.
	AbandonedAfter func(kind string) time.Duration
	// Limits bound request bodies (docs/auth.md#limits); zero fields take the defaults.
	Limits Limits
	// UpstreamAuth authorizes mcp_http sources at their servers' authorization servers
	// and holds their tokens (docs/upstream-oauth.md); nil refuses OAuth sources.
	UpstreamAuth *upstreamauth.Manager
}

// Server holds the handlers' dependencies.
type Server struct {
	deps Deps
	log  *slog.Logger
	keys *auth.Keys
	// queue inserts the jobs that follow a write up (enrichment, syncs, re-weights), with
	// deps.River, for the domain services the handlers call.
	queue jobs.Queue
	// limits are deps.Limits with the defaults filled in.
	limits Limits
	// fair bounds the search units each key has in flight (limits.KeySearchUnits).
	fair *fairShare
	// sources owns the sources' life cycle; the handlers decode, call it and encode.
	sources *sources.Service
}

// New builds the Echo instance with every route registered.
func New(deps Deps) *echo.Echo {
	s := &Server{deps: deps, log: deps.Logger.With("component", "api"), keys: newKeys(deps), queue: jobs.NewQueue(deps.River),
		limits: deps.Limits.withDefaults()}
	s.fair = newFairShare(s.limits.KeySearchUnits)
	s.sources = &sources.Service{Pool: deps.Pool, Queue: s.queue, Commands: deps.Commands, Logger: s.log}
	if deps.UpstreamAuth != nil {
		s.sources.OAuthReady = deps.UpstreamAuth.Ready
	}
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = errorHandler(s.log)
	e.Use(middleware.RequestID())
	e.Use(trackBody)
	// instrumented before Recover and limitBody, so that a panic (500) and a body over the
	// limit (413) are counted and logged like any other answer
	s.instrument(e)
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{
		// the panic and its stack in the service's own structured log, then a 500
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			s.log.ErrorContext(c.Request().Context(), "panic serving a request", "err", err, "stack", string(stack))
			return err
		},
	}))
	e.Use(s.guard)
	e.Use(s.authenticate)
	// after authentication, so that a caller without a key learns no route's limit
	e.Use(s.limitBody)
	e.Use(checkParams)
	s.warnOpenMode()

	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	e.GET("/openapi.json", s.openAPI)

	v1 := e.Group("/v1")
	s.registerSources(v1)
	s.registerSync(v1)
	s.registerAdmin(e.Group("/admin"))
	s.registerJobs(e.Group("/admin"))
	s.registerProfiles(e.Group("/admin"))
	s.registerExperiments(e.Group("/admin"))
	s.registerAnalytics(e.Group("/admin"))
	s.registerCurations(e.Group("/admin"))
	s.registerTools(v1)
	s.registerMCP(e, v1)
	s.registerSearch(e)
	s.registerConsole(e, v1)
	s.registerOAuth(e)
	s.registerUpstreamAuth(e, v1)
	return e
}

// NewHealthOnly is the server of a worker-only process: /healthz and /readyz.
func NewHealthOnly(deps Deps) *echo.Echo {
	s := &Server{deps: deps, log: deps.Logger.With("component", "api")}
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = errorHandler(s.log)
	s.instrument(e)
	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	return e
}

// healthz answers as long as the process serves HTTP.
func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 200 when the database is reachable, migrated and has pgvector.
func (s *Server) readyz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 3*time.Second)
	defer cancel()
	which := ""
	err := postgres.Ready(ctx, cmp.Or(s.deps.ControlPool, s.deps.Pool))
	if err == nil && s.deps.ReadPool != nil {
		if err = postgres.Ready(ctx, cmp.Or(s.deps.ControlReadPool, s.deps.ReadPool)); err != nil {
			which = "read replica: "
		}
	}
	if err != nil {
		// The driver's words (server address, user, database) go to the log only: this
		// endpoint is public.
		s.log.WarnContext(ctx, "not ready", "err", which+err.Error())
		return c.JSON(http.StatusServiceUnavailable, map[string]any{
			"status": "unavailable",
			"error":  map[string]string{"code": "not_ready", "message": which + notReadyMessage(err)},
		})
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
}
