package main

import (
	"cmp"
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/gateway"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/rerank"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/setup"
	"github.com/toolgate/toolgate/internal/upstreamauth"
	"github.com/toolgate/toolgate/internal/version"
)

// runMCP serves the MCP gateway over stdio for a local host (Claude Desktop and the like):
// one session, the host's. Logs go to stderr; stdout carries the protocol.
func runMCP(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags("mcp", env)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	// Logs go to stderr and there is no /metrics here, but traces may be exported.
	stopTracing, err := startTracing(ctx, env)
	if err != nil {
		return err
	}
	defer stopTracing()
	pool, err := postgres.Connect(ctx, env.cfg.DatabaseURL, poolOptions(env)...)
	if err != nil {
		return err
	}
	defer pool.Close()
	if env.cfg.AutoMigrate {
		if err := postgres.MigrateUp(ctx, pool); err != nil {
			return err
		}
	}
	embedder := setup.Embedder(env.cfg, env.providerObserver())
	if err := embed.EnsureSpace(ctx, pool, embedder); err != nil {
		return err
	}
	svc, err := newSearch(env, pool, nil, embedder)
	if err != nil {
		return err
	}
	g := newGateway(env, pool, svc)
	defer g.Close()
	// The local user runs the process, so the session may use every source.
	return g.Serve(ctx, &mcp.StdioTransport{}, &auth.Caller{Name: "stdio", Scope: auth.ScopeSearch})
}

// newGateway builds the MCP gateway from the settings: find_tools runs the same search as
// POST /search.
func newGateway(env *cliEnv, pool *pgxpool.Pool, svc *search.Service) *gateway.Gateway {
	cfg := env.cfg
	return gateway.New(pool, gateway.SearchFinder{Search: svc}, gateway.Options{
		CallTool:            cfg.MCPCallTool,
		UseTool:             cfg.MCPUseTool,
		BindLimit:           cfg.MCPBindLimit,
		CallTimeout:         cfg.MCPCallTimeout,
		ConnectTimeout:      cfg.MCPConnectTimeout,
		UpstreamConcurrency: cfg.MCPUpstreamConcurrency,
		SessionIdle:         cfg.MCPSessionIdle,
		SessionsPerKey:      cfg.MCPSessionsPerKey,
		LabelWindow:         cfg.MCPLabelWindow,
		StreamWriteTimeout:  cfg.MCPStreamWriteTimeout,
		StreamKeepAlive:     cfg.MCPStreamKeepAlive,
		Backends:            gateway.Backends{Lexical: true, Vector: true, Enricher: cfg.Enricher, Reranker: cmp.Or(cfg.Reranker, rerank.KindNone)},
		Logger:              env.log,
		Tracer:              env.spanTracer(),
		Metrics:             env.metrics,
		Commands:            stdioCommands(cfg),
		MaxResponseBytes:    int64(cfg.MCPMaxResponseBytes),
		Version:             version.Get().Version,
		Auth:                upstreamauth.New(pool, cfg.UpstreamAuth, env.log),
	})
}
