// Package peer measures toolgate's POST /search next to a Bleve keyword index of the same
// catalog served over HTTP (internal/bench/blevepeer): same queries, same HTTP client, the
// operations interleaved round after round so that both see the same machine load.
package peer

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/bench/blevepeer"
	"github.com/toolgate/toolgate/internal/bench/httpop"
	"github.com/toolgate/toolgate/internal/bench/searchload"
	"github.com/toolgate/toolgate/internal/search/searchbench"
)

// Config is what Run measures.
type Config struct {
	Sizes    []int           // catalog sizes
	Rounds   int             // times each operation runs, interleaved with the others
	Levels   []bench.Options // per concurrency level, every round
	Catalog  searchload.Catalog
	Toolgate httpop.Toolgate
	Log      *slog.Logger
}

// Report is what Run measured.
type Report struct {
	Results []bench.Result
	// Summary has a Markdown row per size and concurrency level: the p50 per round of each
	// operation and the ratios toolgate / peer and planned / unplanned.
	Summary            []string
	PostgresVersion    string
	LoadStart, LoadEnd string // load averages
}

// op is one of the interleaved operations.
type op struct {
	name    string
	peer    bool           // served by the Bleve peer
	queries []string       // short or long
	extra   map[string]any // request fields besides query and k
}

// Run measures every size: short requests of toolgate and the peer, and the long multi-step
// requests with the default plan, unplanned (plan none) and on the peer.
func Run(ctx context.Context, c Config) (Report, error) {
	short := searchbench.Queries(rand.New(rand.NewPCG(7, 7)))
	long := searchbench.LongQueries(rand.New(rand.NewPCG(7, 7)))
	ops := []op{
		{name: "toolgate POST /search hybrid k=10", queries: short},
		{name: "Bleve peer POST /search k=10", peer: true, queries: short},
		{name: "toolgate POST /search hybrid k=10, 40-80-word requests, default plan", queries: long},
		{name: "toolgate POST /search hybrid k=10, 40-80-word requests, plan none", queries: long, extra: map[string]any{"plan": "none"}},
		{name: "Bleve peer POST /search k=10, 40-80-word requests", peer: true, queries: long},
	}
	rep := Report{LoadStart: bench.LoadAverage()}
	for _, n := range c.Sizes {
		if err := runSize(ctx, c, n, ops, &rep); err != nil {
			return rep, err
		}
	}
	rep.LoadEnd = bench.LoadAverage()
	return rep, nil
}

// runSize runs ops on the n-tool catalog, round after round per concurrency level, into rep.
func runSize(ctx context.Context, c Config, n int, ops []op, rep *Report) error {
	pool, err := c.Catalog(ctx, n)
	if err != nil {
		return err
	}
	defer pool.Close()
	if rep.PostgresVersion == "" {
		rep.PostgresVersion, _ = bench.PostgresVersion(ctx, pool)
	}
	tgBase, stopTG, err := c.Toolgate(pool)
	if err != nil {
		return err
	}
	defer stopTG()
	peerBase, stopPeer, err := serve(ctx, c.Log, pool)
	if err != nil {
		return err
	}
	defer stopPeer()
	for _, opts := range c.Levels {
		hc := httpop.Client(opts.Concurrency) // one client for both servers
		p50 := make([][]time.Duration, len(ops))
		for round := 1; round <= c.Rounds; round++ {
			for i, o := range ops {
				base := tgBase
				if o.peer {
					base = peerBase
				}
				r, err := bench.RunLogged(ctx, c.Log, "bench peer", fmt.Sprintf("%s, %d tools, round %d", o.name, n, round), opts, httpop.PostSearch(hc, base, o.queries, o.extra))
				if err != nil {
					return err
				}
				rep.Results = append(rep.Results, r)
				p50[i] = append(p50[i], r.P50)
			}
		}
		rep.Summary = append(rep.Summary, fmt.Sprintf("| %d | %d | %s | %s | %s | %s | %s | %s | %s |", n, opts.Concurrency,
			bench.Durations(p50[0]), bench.Durations(p50[1]), bench.Ratios(p50[0], p50[1]),
			bench.Durations(p50[2]), bench.Durations(p50[3]), bench.Ratios(p50[2], p50[3]), bench.Durations(p50[4])))
	}
	return nil
}

// serve indexes the catalog of pool in a Bleve peer and serves it on a loopback listener;
// it returns the base URL and the function stopping it.
func serve(ctx context.Context, log *slog.Logger, pool *pgxpool.Pool) (string, func(), error) {
	tools, err := Tools(ctx, pool)
	if err != nil {
		return "", nil, fmt.Errorf("peer catalog: %w", err)
	}
	t0 := time.Now()
	p, err := blevepeer.New(tools)
	if err != nil {
		return "", nil, err
	}
	log.Info("bench peer: indexed", "tools", len(tools), "elapsed", time.Since(t0).Round(time.Millisecond).String())
	base, stop, err := httpop.Serve(p.Handler())
	if err != nil {
		_ = p.Close()
		return "", nil, err
	}
	return base, func() { stop(); _ = p.Close() }, nil
}

// Tools reads the searchable tools of a bench catalog for the keyword peer: the tools
// toolgate's search can return.
func Tools(ctx context.Context, pool *pgxpool.Pool) ([]blevepeer.Tool, error) {
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
