package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/jobs"
)

// demoStdioCommands is what mcp_stdio sources may run in the demo when
// TOOLGATE_STDIO_COMMANDS is not set: the reference server of the README's tour, exactly.
var demoStdioCommands = [][]string{{"npx", "-y", "@modelcontextprotocol/server-everything"}}

// The keys `demo --keys` makes: an admin key, and a search key that sees the demo source only.
const (
	demoAdminKey  = "demo-admin"
	demoSearchKey = "demo-search"
)

// runDemo migrates, loads (or refreshes) the bundled ScaleMCP-style demo catalog (5,000
// tools by default) as the catalog source "demo", and serves in open mode, or with --keys
// with API keys it makes and prints. Enrichment and embedding of the catalog run as River
// jobs in the background; lexical search works at once.
func runDemo(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags("demo", env)
	listen := fs.String("listen", env.cfg.ListenAddr, "HTTP listen address")
	n := fs.Int("companies", 1000, fmt.Sprintf("companies in the demo catalog, 5 tools each (1-%d)", dataset.MaxCompanies()))
	withKeys := fs.Bool("keys", false, "serve with API keys instead of open mode: make an admin key and a search key that sees the demo source only (replacing those of a previous run) and print them on stdout as ADMIN_KEY=... and SEARCH_KEY=...")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	companies, err := dataset.Companies(*n)
	if err != nil {
		return &cli.UsageError{Msg: err.Error()}
	}
	env.cfg.ListenAddr = *listen
	env.cfg.Open = !*withKeys // the demo is for local use: no keys to make first, unless asked
	if env.cfg.LogFormat == config.LogFormatAuto {
		env.cfg.LogFormat = "text" // a person reads the demo's log
		env.log = newLogger(env.cfg, env.stderr)
	}
	if env.cfg.StdioCommands == nil {
		env.cfg.StdioCommands = demoStdioCommands
	}
	if err := env.cfg.Validate(); err != nil {
		return err
	}
	pool, err := postgres.Connect(ctx, env.cfg.DatabaseURL, poolOptions(env)...)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := postgres.MigrateUp(ctx, pool); err != nil {
		return err
	}
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: env.log}, jobs.Options{})
	if err != nil {
		return err
	}
	_, res, err := sources.Import(ctx, pool, jobs.NewQueue(rc), "demo", dataset.Tools(companies))
	if err != nil {
		return fmt.Errorf("load demo catalog: %w", err)
	}
	env.log.Info("demo catalog loaded", "source", "demo", "created", res.Created, "updated", res.Updated,
		"deleted", res.Deleted, "unchanged", res.Unchanged)
	base := "http://" + demoHost(*listen)
	env.log.Info("console: " + base + "/ui/ (open it in a browser on this machine)")
	keyHeader := ""
	if *withKeys {
		if err := demoKeys(ctx, env, pool); err != nil {
			return err
		}
		keyHeader = ` -H "Authorization: Bearer $SEARCH_KEY"`
	}
	env.log.Info("try: curl -s " + base + "/search" + keyHeader + " -H 'Content-Type: application/json' -d '{\"query\":\"what is Apple trading at right now\",\"k\":3}'")
	go watchEnrichment(ctx, env.log, pool, "demo", enrichmentProgressEvery)
	return serve(ctx, env, pool)
}

// demoKeys makes the keyed demo's keys, an admin key and a search key limited to the demo
// source, and prints them on stdout as shell assignments. A key is shown only when it is
// made, so the keys of a previous run, whose text is gone, are revoked first.
func demoKeys(ctx context.Context, env *cliEnv, pool *pgxpool.Pool) error {
	keys := auth.NewKeys(pool, time.Now)
	specs := []struct {
		variable string
		spec     auth.Spec
	}{
		{"ADMIN_KEY", auth.Spec{Name: demoAdminKey, Scope: auth.ScopeAdmin, RatePerMin: auth.DefaultRatePerMin}},
		{"SEARCH_KEY", auth.Spec{Name: demoSearchKey, Scope: auth.ScopeSearch, Sources: []string{"demo"}, RatePerMin: auth.DefaultRatePerMin}},
	}
	for _, s := range specs {
		if _, err := keys.Revoke(ctx, s.spec.Name); err != nil && !errors.Is(err, auth.ErrKeyNotFound) {
			return err
		}
		_, text, err := keys.Create(ctx, s.spec)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "%s=%s\n", s.variable, text)
	}
	env.log.Info("demo keys printed on stdout: ADMIN_KEY (key " + demoAdminKey + ", scope admin), SEARCH_KEY (key " + demoSearchKey +
		", scope search, source demo only); the next demo --keys replaces them")
	return nil
}

// demoHost is the host:port to reach a server listening on addr from this machine.
func demoHost(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}
