package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/httpguard"
	"github.com/toolgate/toolgate/internal/meaning"
	"github.com/toolgate/toolgate/internal/memory"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/oauth"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/setup"
	"github.com/toolgate/toolgate/internal/syncwatch"
	"github.com/toolgate/toolgate/internal/upstreamauth"
	"github.com/toolgate/toolgate/jobs"
)

func runServe(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags("serve", env)
	listen := fs.String("listen", env.cfg.ListenAddr, "HTTP listen address (LISTEN_ADDR)")
	role := fs.String("role", string(env.cfg.Role), "all, api or worker (TOOLGATE_ROLE)")
	noMigrate := fs.Bool("no-migrate", !env.cfg.AutoMigrate, "do not apply migrations at start (TOOLGATE_AUTO_MIGRATE=false)")
	open := fs.Bool("open", env.cfg.Open, "open mode: no API key needed, every caller is admin (TOOLGATE_OPEN); local use only")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	env.cfg.ListenAddr, env.cfg.Role, env.cfg.AutoMigrate = *listen, config.Role(*role), !*noMigrate
	env.cfg.Open = *open
	if err := env.cfg.Validate(); err != nil {
		return err
	}
	stopTracing, err := startTracing(ctx, env)
	if err != nil {
		return err
	}
	defer stopTracing()
	pool, err := postgres.Connect(ctx, env.cfg.DatabaseURL, servePoolOptions(env)...)
	if err != nil {
		return err
	}
	defer pool.Close()
	if env.cfg.AutoMigrate {
		if err := migrateUp(ctx, env, pool); err != nil {
			return err
		}
	}
	return serve(ctx, env, pool)
}

// serve runs the API and the workers on an opened, migrated pool until ctx ends, then shuts
// down gracefully: in-flight requests and running jobs get ShutdownTimeout to finish.
func serve(ctx context.Context, env *cliEnv, pool *pgxpool.Pool) error {
	cfg := env.cfg
	if err := postgres.Ready(ctx, pool); err != nil {
		return fmt.Errorf("%w (run `toolgate migrate up`, or serve without --no-migrate)", err)
	}
	// The retrieval log needs this month's partition before the first search, whatever
	// role this process has; the periodic job keeps them coming afterwards.
	if _, err := db.New(pool).EnsureSearchLogPartitions(ctx, 2); err != nil {
		return err
	}
	// The metrics exist before the providers, which record their calls in them.
	m := metrics.New()
	env.metrics = m
	embedder := setup.Embedder(cfg, env.providerObserver())
	m.WatchPool("primary", pool)
	m.WatchJobs(pool, env.log)
	work := cfg.Role != config.RoleAPI
	searchSt, err := searchSettings(env)
	if err != nil {
		return err
	}
	if searchSt.WeightMeaning > 0 {
		// the meaning branch's lexicon, read once, in the background: not at the first search
		go func() {
			if _, err := meaning.Builtin(); err != nil {
				env.log.Error("meaning branch: the lexicon does not load", "err", err)
			}
		}()
	}
	// OAuth to mcp_http sources: one manager for the syncs, the watcher, the gateway and the API
	upAuth := upstreamauth.New(pool, cfg.UpstreamAuth, env.log)
	jobDeps := jobs.Deps{Pool: pool, Logger: env.log, SearchLogKeep: cfg.SearchLogKeep, Metrics: m,
		Embedder: embedder, Enricher: setup.Enricher(cfg, env.providerObserver()), Questions: cfg.Questions, MCPSessionKeep: cfg.MCPSessionKeep,
		ObservedQueries: cfg.ObservedQueries, ObservedMinKeys: cfg.ObservedMinKeys,
		Memory: cfg.MemoryWeight > 0, MemoryPerTool: cfg.MemoryPerTool, MemoryListsFrom: memory.ListFromSetting(cfg.MemoryListsFrom), SyncTimeout: cfg.SyncTimeout, EnrichTimeout: cfg.EnrichTimeout, ReweightTimeout: cfg.ReweightTimeout, JobTimeout: cfg.JobTimeout,
		Commands: stdioCommands(cfg), ListLimits: listLimits(cfg), Auth: upAuth,
		Search: searchSt}
	rc, err := jobs.NewClient(jobDeps,
		jobs.Options{Work: work, MaxWorkers: cfg.Workers, PollOnly: cfg.RiverPollOnly, RescueAfter: cfg.RescueAfter})
	if err != nil {
		return err
	}
	// Vectors of an older version of the built-in embedder are remade by the workers
	// (queued through rc, which has not started); vectors of another model would make every
	// search answer wrong: refuse to start.
	if err := upgradeLocalVectors(ctx, env, pool, jobs.NewQueue(rc), embedder); err != nil {
		return err
	}
	if err := embed.EnsureSpace(ctx, pool, embedder); err != nil {
		return err
	}
	watchDone := make(chan struct{})
	if work {
		scrubJobErrors(ctx, env, pool)
		// A new version of the built-in enricher reaches the tools the old one enriched.
		n, err := jobs.RequeueSuperseded(ctx, pool, rc, jobDeps.Enricher)
		if err != nil {
			return err
		}
		if n > 0 {
			env.log.Info("enrichment upgrade queued", "enricher", jobDeps.Enricher.Model(), "tools", n)
		}
		// Not ctx itself: River cancels running jobs when its start context ends, and
		// SIGTERM ends ctx. The shutdown below stops River first gracefully (rc.Stop, up
		// to ShutdownTimeout), then cancels what is still running.
		if err := rc.Start(context.WithoutCancel(ctx)); err != nil {
			return fmt.Errorf("start workers: %w", err)
		}
		go func() {
			syncwatch.New(pool, jobs.NewQueue(rc), env.log, cfg.SyncTimeout, stdioCommands(cfg), listLimits(cfg)).WithAuth(upAuth).Run(ctx)
			close(watchDone)
		}()
	} else {
		close(watchDone)
	}
	var readPool *pgxpool.Pool
	if cfg.DatabaseReadURL != "" && cfg.Role != config.RoleWorker {
		if readPool, err = postgres.Connect(ctx, cfg.DatabaseReadURL, servePoolOptions(env)...); err != nil {
			return fmt.Errorf("read replica (DATABASE_READ_URL): %w", err)
		}
		defer readPool.Close()
		m.WatchPool("replica", readPool)
		env.log.Info("searches go to the read replica", "replica", config.Redact(cfg.DatabaseReadURL))
	}
	control, controlRead, err := controlPools(ctx, env, readPool != nil)
	if err != nil {
		return err
	}
	defer control.Close()
	m.WatchPool("control", control)
	if controlRead != nil {
		defer controlRead.Close()
		m.WatchPool("control_replica", controlRead)
	}
	searchSvc := newSearchWith(env, searchSt, pool, readPool, embedder)
	deps := api.Deps{Pool: pool, ReadPool: readPool, ControlPool: control, ControlReadPool: controlRead, River: rc, Logger: env.log, Metrics: m, Tracing: env.tracer(), Open: cfg.Open,
		Commands: stdioCommands(cfg), CORSOrigins: cfg.CORSOrigins, Search: searchSvc, AbandonedAfter: jobDeps.AbandonedAfter, Limits: bodyLimits(cfg), UpstreamAuth: upAuth}
	var e *echo.Echo
	if cfg.Role == config.RoleWorker {
		e = api.NewHealthOnly(deps)
	} else {
		deps.Gateway = newGateway(env, pool, searchSvc)
		defer deps.Gateway.Close()
		if cfg.OAuth.Enabled() {
			deps.OAuth = oauth.NewVerifier(cfg.OAuth, env.log)
			env.log.Info("OAuth access tokens accepted beside API keys", "issuers", cfg.OAuth.Issuers, "resource", cfg.OAuth.Resource)
		}
		e = api.New(deps)
	}
	srv := api.NewHTTPServer(e, serverLimits(cfg), env.log)
	if deps.Gateway != nil {
		srv.RegisterOnShutdown(deps.Gateway.Close)
	}
	ln, err := net.Listen("tcp", cfg.ServeAddr())
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.ServeAddr(), err)
	}
	env.log.Info("toolgate serving", "addr", ln.Addr().String(), "role", cfg.Role)
	if cfg.Open && cfg.OpenRemote && !httpguard.IsLoopback(ln.Addr().String()) {
		env.log.Warn("OPEN MODE beyond loopback (TOOLGATE_OPEN_REMOTE): whoever reaches this address is admin", "addr", ln.Addr().String())
	}

	srvErr := make(chan error, 1)
	go func() { srvErr <- srv.Serve(ln) }()
	select {
	case err := <-srvErr:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	case <-ctx.Done():
	}

	env.log.Info("shutting down", "timeout", cfg.ShutdownTimeout)
	shutCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	httpErr := srv.Shutdown(shutCtx)
	if work {
		if err := rc.Stop(shutCtx); err != nil {
			env.log.Warn("jobs still running at shutdown timeout; cancelling them", "err", err)
			cancelCtx, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel2()
			_ = rc.StopAndCancel(cancelCtx)
		}
	}
	<-watchDone
	if httpErr != nil {
		return fmt.Errorf("http shutdown: %w", httpErr)
	}
	env.log.Info("stopped")
	return nil
}

// serverLimits are the settings' limits of the HTTP server (docs/auth.md#limits).
func serverLimits(cfg config.Config) api.ServerLimits {
	return api.ServerLimits{ReadHeaderTimeout: cfg.HTTPReadHeaderTimeout, ReadTimeout: cfg.HTTPReadTimeout,
		IdleTimeout: cfg.HTTPIdleTimeout, MaxHeaderBytes: cfg.HTTPMaxHeaderBytes}
}

// bodyLimits are the settings' limits of request bodies (docs/auth.md#limits).
func bodyLimits(cfg config.Config) api.Limits {
	return api.Limits{MaxBodyBytes: int64(cfg.MaxBodyBytes), MaxCatalogBytes: int64(cfg.MaxCatalogBytes), MaxCatalogTools: cfg.MaxCatalogTools,
		KeySearchUnits: cfg.KeySearchUnits}
}

// defaultServeConns is the size of serve's pools when neither TOOLGATE_DB_MAX_CONNS nor the
// URL's pool_max_conns sets one: measured in docs/scaling.md#pool-size.
const defaultServeConns = 12

// servePoolOptions are the options of serve's pools: defaultServeConns unless the URL or
// the setting says otherwise (the setting wins), then poolOptions.
func servePoolOptions(env *cliEnv) []postgres.Option {
	serveDefault := func(c *pgxpool.Config) {
		if !strings.Contains(c.ConnString(), "pool_max_conns") {
			c.MaxConns = defaultServeConns
		}
	}
	return append([]postgres.Option{serveDefault}, poolOptions(env)...)
}

// controlPools opens the small pools (TOOLGATE_DB_CONTROL_CONNS) of the key lookups and
// /readyz on the primary and, when there is one, the replica: searches never take their
// connections, so a caller is authenticated and readiness answers while searches hold
// every connection of the main pools (docs/auth.md#fair-share).
func controlPools(ctx context.Context, env *cliEnv, replica bool) (control, controlRead *pgxpool.Pool, err error) {
	opts := []postgres.Option{postgres.WithMaxConns(env.cfg.DBControlConns), postgres.WithQueryTracer(env.tracer().SQLTracer())}
	if control, err = postgres.Connect(ctx, env.cfg.DatabaseURL, opts...); err != nil {
		return nil, nil, fmt.Errorf("control pool: %w", err)
	}
	if replica {
		if controlRead, err = postgres.Connect(ctx, env.cfg.DatabaseReadURL, opts...); err != nil {
			control.Close()
			return nil, nil, fmt.Errorf("control pool of the read replica (DATABASE_READ_URL): %w", err)
		}
	}
	return control, controlRead, nil
}

// scrubJobErrors rewrites, once at start, the River job errors that were recorded with
// credentials in them, before errors were scrubbed when made (jobs.ScrubJobErrors). Once
// is enough: every error since is scrubbed when made, the admin endpoints scrub what they
// show anyway, and River deletes finished jobs after a few days. A failure only delays
// that cleaning to the next start.
func scrubJobErrors(ctx context.Context, env *cliEnv, pool *pgxpool.Pool) {
	ctx, cancel := context.WithTimeout(ctx, env.cfg.JobTimeout)
	defer cancel()
	n, err := jobs.ScrubJobErrors(ctx, pool)
	switch {
	case err != nil:
		env.log.Warn("could not scrub credentials from old job errors; retried at the next start", "err", err)
	case n > 0:
		env.log.Info("scrubbed credentials from old job errors", "jobs", n)
	}
}
