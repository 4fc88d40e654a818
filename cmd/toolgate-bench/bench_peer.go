package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/bench/blevepeer"
	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/search/searchbench"
)

// peerTools reads the searchable tools of a bench catalog for the keyword peer: the tools
// toolgate's search can return.
func peerTools(ctx context.Context, pool *pgxpool.Pool) ([]blevepeer.Tool, error) {
	// Raw SQL: a one-off read of the benchmark database's catalog, for the peer only.
	rows, err := pool.Query(ctx, `
		SELECT t.name, s.name, t.description, t.input_schema
		FROM tools t JOIN sources s ON s.id = t.source_id
		WHERE t.enabled AND t.review_state = 'approved'
		ORDER BY t.name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []blevepeer.Tool
	for rows.Next() {
		var t blevepeer.Tool
		if err := rows.Scan(&t.Name, &t.Source, &t.Description, &t.InputSchema); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// peerServer indexes the catalog of pool in a Bleve peer and serves it on a loopback
// listener; it returns the base URL and the function stopping it.
func peerServer(ctx context.Context, env *cliEnv, pool *pgxpool.Pool) (string, func(), error) {
	tools, err := peerTools(ctx, pool)
	if err != nil {
		return "", nil, fmt.Errorf("peer catalog: %w", err)
	}
	t0 := time.Now()
	p, err := blevepeer.New(tools)
	if err != nil {
		return "", nil, err
	}
	env.log.Info("bench peer: indexed", "tools", len(tools), "elapsed", time.Since(t0).Round(time.Millisecond).String())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = p.Close()
		return "", nil, err
	}
	srv := &http.Server{Handler: p.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close(); _ = p.Close() }, nil
}

// peerOp is one of the interleaved operations of bench peer.
type peerOp struct {
	name    string
	peer    bool           // served by the Bleve peer
	queries []string       // short or long
	extra   map[string]any // request fields besides query and k
}

// runBenchPeer measures toolgate's POST /search next to a Bleve keyword index of the same
// catalog served over HTTP (internal/bench/blevepeer): same queries, same HTTP client, the
// operations interleaved round after round so that both see the same machine load. It
// also runs the long multi-step requests with the default plan and unplanned (plan none).
func runBenchPeer(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags("bench peer", env)
	toolsFlag := fs.String("tools", "200,5000", "comma-separated catalog sizes")
	reuse := fs.Bool("reuse", false, "reuse toolgate_bench_<n> when it already holds n tools")
	rounds := fs.Int("rounds", 2, "times each operation runs, interleaved with the others")
	bf := addBenchFlags(fs, benchDefaults{warmup: 50, runs: 1000, concurrency: "1,8"})
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *rounds < 1 {
		return &cli.UsageError{Msg: "--rounds: at least 1"}
	}
	levels, err := bf.options()
	if err != nil {
		return err
	}
	sizes, err := parseSizes(*toolsFlag)
	if err != nil {
		return err
	}
	short := searchbench.Queries(rand.New(rand.NewPCG(7, 7)))
	long := searchbench.LongQueries(rand.New(rand.NewPCG(7, 7)))
	ops := []peerOp{
		{name: "toolgate POST /search hybrid k=10", queries: short},
		{name: "Bleve peer POST /search k=10", peer: true, queries: short},
		{name: "toolgate POST /search hybrid k=10, 40-80-word requests, default plan", queries: long},
		{name: "toolgate POST /search hybrid k=10, 40-80-word requests, plan none", queries: long, extra: map[string]any{"plan": "none"}},
		{name: "Bleve peer POST /search k=10, 40-80-word requests", peer: true, queries: long},
	}
	loadStart := bench.LoadAverage()
	var results []bench.Result
	var summary []string
	var pgVersion string
	for _, n := range sizes {
		rows, pv, err := benchPeerSize(ctx, env, n, *reuse, *rounds, levels, ops, &results)
		if err != nil {
			return err
		}
		if pgVersion == "" {
			pgVersion = pv
		}
		summary = append(summary, rows...)
	}
	writeBenchReport(env.stdout, "Search next to a keyword engine (toolgate bench peer)", append([]string{"bench", "peer"}, args...), bench.DescribeMachine(pgVersion), results)
	fmt.Fprintf(env.stdout, "\nLoad average (1, 5, 15 min): %s at the start, %s at the end.\n\n"+
		"p50 per round, and the ratios of the rounds' p50s:\n\n"+
		"| tools | clients | toolgate short | peer short | toolgate / peer | long, default plan | long, plan none | planned / unplanned | peer long |\n"+
		"|---:|---:|---|---|---|---|---|---|---|\n%s\n", loadStart, bench.LoadAverage(), strings.Join(summary, "\n"))
	return nil
}

// benchPeerSize runs ops on the n-tool catalog, round after round per concurrency level,
// appends the results and returns the summary rows and the PostgreSQL version.
func benchPeerSize(ctx context.Context, env *cliEnv, n int, reuse bool, rounds int, levels []bench.Options, ops []peerOp, results *[]bench.Result) ([]string, string, error) {
	pool, err := benchCatalogDB(ctx, env, n, reuse)
	if err != nil {
		return nil, "", err
	}
	defer pool.Close()
	pgVersion, _ := bench.PostgresVersion(ctx, pool)
	tgBase, stopTG, err := benchServer(env, pool)
	if err != nil {
		return nil, "", err
	}
	defer stopTG()
	peerBase, stopPeer, err := peerServer(ctx, env, pool)
	if err != nil {
		return nil, "", err
	}
	defer stopPeer()
	var summary []string
	for _, opts := range levels {
		hc := benchClient(opts.Concurrency) // one client for both servers
		p50 := make([][]time.Duration, len(ops))
		for round := 1; round <= rounds; round++ {
			for i, o := range ops {
				base := tgBase
				if o.peer {
					base = peerBase
				}
				name := fmt.Sprintf("%s, %d tools, round %d", o.name, n, round)
				r, err := bench.Run(ctx, name, opts, postSearchOp(hc, base, o.queries, o.extra))
				if err != nil {
					return nil, "", err
				}
				env.log.Info("bench peer", "result", r.String())
				if r.FirstError != nil && r.Errors == r.Runs {
					return nil, "", fmt.Errorf("%s: every operation failed, the first with: %w", name, r.FirstError)
				}
				if r.FirstError != nil {
					env.log.Warn("bench peer: errors", "first", r.FirstError.Error())
				}
				*results = append(*results, r)
				p50[i] = append(p50[i], r.P50)
			}
		}
		summary = append(summary, fmt.Sprintf("| %d | %d | %s | %s | %s | %s | %s | %s | %s |", n, opts.Concurrency,
			durations(p50[0]), durations(p50[1]), ratios(p50[0], p50[1]),
			durations(p50[2]), durations(p50[3]), ratios(p50[2], p50[3]), durations(p50[4])))
	}
	return summary, pgVersion, nil
}

// durations lists the p50s of the rounds.
func durations(ds []time.Duration) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = bench.FormatDuration(d)
	}
	return strings.Join(s, ", ")
}

// ratios lists a[i] / b[i] per round.
func ratios(a, b []time.Duration) string {
	s := make([]string, len(a))
	for i := range a {
		if i >= len(b) || b[i] <= 0 {
			s[i] = "–"
			continue
		}
		s[i] = fmt.Sprintf("%.2f×", float64(a[i])/float64(b[i]))
	}
	return strings.Join(s, ", ")
}
