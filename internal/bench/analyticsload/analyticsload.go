// Package analyticsload times the console's reads (GET /admin/analytics/* and the other GETs
// of its pages) on a seeded retrieval log, before and after the rollup.
package analyticsload

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/analytics"
	"github.com/toolgate/toolgate/internal/analytics/analyticsbench"
	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/bench/httpop"
)

// URLs are the requests Run times, each through the real HTTP server: every
// /admin/analytics endpoint with its default window, and the wider windows the console may
// ask for. Add a console endpoint here to have it measured.
var URLs = []string{
	"/admin/analytics/searches?days=7&bucket=hour",
	"/admin/analytics/searches?days=30&bucket=day",
	"/admin/analytics/zero-results?days=7&limit=50",
	"/admin/analytics/zero-results?days=30&limit=50",
	"/admin/analytics/low-score?days=7&limit=50",
	"/admin/analytics/low-score?days=30&limit=50",
	"/admin/analytics/profiles?days=30",
	"/admin/analytics/learning?days=30",
	"/admin/analytics/learning?days=30&tenant=acme",
	"/admin/analytics/tools?limit=50",
	"/admin/analytics/slowest?days=7&limit=50",
	"/admin/analytics/slowest?days=30&limit=500",
	"/admin/analytics/top-queries?days=7&limit=50",
	"/admin/analytics/top-queries?days=30&limit=50",
}

// ConsolePageURLs are the other GETs the console's pages make (docs/console.md; its search
// page's POST /search is measured by bench search), timed with URLs after the rollup: the
// catalog's 100 sources hold 500 tools each.
var ConsolePageURLs = []string{
	"/v1/whoami",
	"/v1/sources",
	"/v1/sources/src001",
	"/v1/tools?source=src001&review_state=pending&limit=50",
	"/v1/tools?source=src001&limit=50",
	"/v1/tools?limit=50",
	"/v1/sources/src001/runs?limit=20",
	"/v1/tools/src001__tool_1",
	"/admin/profiles",
	"/admin/tunes",
	"/admin/experiments",
	"/admin/jobs/summary",
	"/admin/jobs?limit=50",
}

// Config is what Run measures.
type Config struct {
	Pool                  *pgxpool.Pool
	Base                  string // the API server's base URL, serving Pool's database
	Tools, Searches, Days int    // the seeded catalog and log
	LiveRuns              int    // measured requests per URL before the rollup (0: skip)
	Levels                []bench.Options
	Log                   *slog.Logger
}

// Report is what Run measured.
type Report struct {
	Live    []bench.Result // URLs before the rollup, reading the log itself
	Results []bench.Result // URLs and ConsolePageURLs after the rollup
	Seeded  time.Duration
	Rolled  time.Duration // the first rollup of the whole log
	Steps   int           // its steps
}

// Run seeds c.Pool's database with a catalog and a retrieval log
// (internal/analytics/analyticsbench), times each of URLs reading the log itself, rolls the
// log up as the search_rollup job does, and times them again on the rollups, with
// ConsolePageURLs.
func Run(ctx context.Context, c Config) (Report, error) {
	var rep Report
	t0 := time.Now()
	if err := analyticsbench.Seed(ctx, c.Pool, c.Tools, c.Searches, c.Days, func(f string, a ...any) {
		c.Log.Info("bench analytics: seed", "step", fmt.Sprintf(f, a...))
	}); err != nil {
		return rep, err
	}
	rep.Seeded = time.Since(t0)
	hc := &http.Client{Timeout: 5 * time.Minute}
	if c.LiveRuns > 0 {
		opts := bench.Options{Warmup: 1, Runs: c.LiveRuns, Concurrency: 1}
		for _, u := range URLs {
			r, err := bench.Run(ctx, "GET "+u, opts, httpop.Get(hc, c.Base+u))
			if err != nil {
				return rep, err
			}
			c.Log.Info("bench analytics: from the log", "result", r.String())
			rep.Live = append(rep.Live, r)
		}
	}
	t1 := time.Now()
	rolled, err := analytics.Rollup(ctx, c.Pool, analytics.RollupOptions{})
	if err != nil {
		return rep, err
	}
	rep.Rolled, rep.Steps = time.Since(t1), rolled.Steps
	c.Log.Info("bench analytics: rolled up", "hours", rolled.HoursRolled, "steps", rolled.Steps, "elapsed", rep.Rolled.Round(time.Second).String())
	for _, u := range append(slices.Clone(URLs), ConsolePageURLs...) {
		for _, opts := range c.Levels {
			r, err := bench.Run(ctx, "GET "+u, opts, httpop.Get(hc, c.Base+u))
			if err != nil {
				return rep, err
			}
			c.Log.Info("bench analytics", "result", r.String())
			if r.FirstError != nil {
				return rep, fmt.Errorf("GET %s: %w", u, r.FirstError)
			}
			rep.Results = append(rep.Results, r)
		}
	}
	return rep, nil
}
