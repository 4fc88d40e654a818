package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/riverdb"
	"github.com/toolgate/toolgate/internal/search/searchbench"
	"github.com/toolgate/toolgate/internal/setup"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/jobs"
)

// runBenchIngest times making a catalog lexically searchable through the two paths users
// take: `toolgate import` (sources.Import, which returns once the tools are in the
// lexical index) and PUT /v1/sources/{name}/tools over HTTP. Each operation writes the
// searchbench catalog of n tools into a new source of a fresh database
// (toolgate_bench_ingest, dropped at the end), so later runs write into a catalog that
// already holds the earlier runs' tools.
//
// With --enriching N the imports run against a server that is enriching: a catalog of N
// other tools is imported first and a River client with TOOLGATE_WORKERS workers (the
// configured providers) works its enrichment, and every timed import's, throughout.
func runBenchIngest(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags("bench ingest", env)
	toolsFlag := fs.String("tools", "5000,50000", "comma-separated catalog sizes")
	enriching := fs.Int("enriching", 0, "enrich a catalog of this many other tools while the imports run (0: no workers)")
	bf := addBenchFlags(fs, benchDefaults{warmup: 0, runs: 2, concurrency: "1"})
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	levels, err := bf.options()
	if err != nil {
		return err
	}
	sizes, err := parseSizes(*toolsFlag)
	if err != nil {
		return err
	}
	dbURL, drop, err := freshBenchDB(ctx, env, "toolgate_bench_ingest")
	if err != nil {
		return err
	}
	defer drop()
	pool, err := postgres.Connect(ctx, dbURL, poolOptions(env)...)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := postgres.MigrateUp(ctx, pool); err != nil {
		return err
	}
	pgVersion, _ := bench.PostgresVersion(ctx, pool)
	// Insert-only unless --enriching: the enrichment jobs an import queues are stored, not
	// worked.
	deps := jobs.Deps{Pool: pool, Logger: env.log}
	opts := jobs.Options{}
	if *enriching > 0 {
		deps.Embedder, deps.Enricher, deps.Questions = setup.Embedder(env.cfg, nil), setup.Enricher(env.cfg, nil), env.cfg.Questions
		opts = jobs.Options{Work: true, MaxWorkers: env.cfg.Workers}
	}
	rc, err := jobs.NewClient(deps, opts)
	if err != nil {
		return err
	}
	if *enriching > 0 {
		if err := startEnriching(ctx, env, pool, rc, *enriching); err != nil {
			return err
		}
		defer func() { _ = rc.StopAndCancel(context.WithoutCancel(ctx)) }()
	}
	// the benchmark measures catalogs of any size, the production limit aside
	e := api.New(api.Deps{Pool: pool, Logger: env.log, Open: true, River: rc, Limits: api.Limits{MaxCatalogTools: slices.Max(sizes)}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: e, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	hc := &http.Client{Timeout: 10 * time.Minute}

	var results []bench.Result
	source := 0
	for _, n := range sizes {
		var tools []catalog.Tool
		var body bytes.Buffer
		for _, t := range searchbench.Catalog(n, rand.New(rand.NewPCG(3, uint64(n)))) {
			tl := catalog.Tool{Name: t.Name, Description: t.Description, InputSchema: json.RawMessage(t.Schema)}
			tools = append(tools, tl)
			line, err := json.Marshal(tl)
			if err != nil {
				return err
			}
			body.Write(append(line, '\n'))
		}
		ops := []struct {
			name string
			op   bench.Op
		}{
			{fmt.Sprintf("import %d tools (searchable on return)", n), func(ctx context.Context, _ int) error {
				source++
				_, _, err := sources.Import(ctx, pool, jobs.NewQueue(rc), "ingest-"+strconv.Itoa(source), tools)
				return err
			}},
			{fmt.Sprintf("PUT /v1/sources/{name}/tools, %d tools", n), func(ctx context.Context, _ int) error {
				source++
				req, err := http.NewRequestWithContext(ctx, http.MethodPut, base+"/v1/sources/ingest-"+strconv.Itoa(source)+"/tools", bytes.NewReader(body.Bytes()))
				if err != nil {
					return err
				}
				req.Header.Set("Content-Type", "application/json")
				resp, err := hc.Do(req)
				if err != nil {
					return err
				}
				defer resp.Body.Close()
				data, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != http.StatusOK {
					return fmt.Errorf("PUT: %d %s", resp.StatusCode, bytes.TrimSpace(data))
				}
				return nil
			}},
		}
		for _, o := range ops {
			for _, opts := range levels {
				r, err := bench.Run(ctx, o.name, opts, o.op)
				if err != nil {
					return err
				}
				env.log.Info("bench ingest", "result", r.String())
				if r.FirstError != nil {
					env.log.Warn("bench ingest: errors", "first", r.FirstError.Error())
				}
				results = append(results, r)
			}
		}
	}
	writeBenchReport(env.stdout, "Ingest (toolgate bench ingest)", append([]string{"bench", "ingest"}, args...), bench.DescribeMachine(pgVersion), results)
	return nil
}

// startEnriching imports a catalog of n tools (other than the timed ones) and starts rc's
// workers on its enrichment, returning once they have enriched some of it: the imports that
// follow run against a server that is enriching, as a deployment's first minutes are.
func startEnriching(ctx context.Context, env *cliEnv, pool *pgxpool.Pool, rc *river.Client[pgx.Tx], n int) error {
	var tools []catalog.Tool
	for _, t := range searchbench.Catalog(n, rand.New(rand.NewPCG(7, uint64(n)))) {
		tools = append(tools, catalog.Tool{Name: t.Name, Description: t.Description, InputSchema: json.RawMessage(t.Schema)})
	}
	if _, _, err := sources.Import(ctx, pool, jobs.NewQueue(rc), "enriching", tools); err != nil {
		return err
	}
	if err := rc.Start(ctx); err != nil {
		return err
	}
	for {
		counts, err := riverdb.CountJobs(ctx, pool, jobs.EnrichToolArgs{}.Kind())
		if err != nil {
			return err
		}
		done := 0
		for _, c := range counts {
			if c.State == string(rivertype.JobStateCompleted) {
				done = int(c.Count)
			}
		}
		if done >= min(500, n/2) {
			env.log.Info("bench ingest: enrichment under way", "tools", n, "enriched", done)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// freshBenchDB (re)creates database name on the DATABASE_URL server and returns its URL and
// a function dropping it.
func freshBenchDB(ctx context.Context, env *cliEnv, name string) (string, func(), error) {
	u, err := url.Parse(env.cfg.DatabaseURL)
	if err != nil {
		return "", nil, err
	}
	admin, err := pgx.Connect(ctx, env.cfg.DatabaseURL)
	if err != nil {
		return "", nil, err
	}
	defer admin.Close(context.WithoutCancel(ctx))
	// Raw DDL: database names cannot be bind parameters; callers pass a name they built.
	for _, s := range []string{`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`, `CREATE DATABASE ` + name} {
		if _, err := admin.Exec(ctx, s); err != nil {
			return "", nil, fmt.Errorf("%s: %w", s, err)
		}
	}
	u.Path = "/" + name
	drop := func() {
		c, err := pgx.Connect(context.WithoutCancel(ctx), env.cfg.DatabaseURL)
		if err != nil {
			return
		}
		defer c.Close(context.WithoutCancel(ctx))
		_, _ = c.Exec(context.WithoutCancel(ctx), `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
	}
	return u.String(), drop, nil
}
