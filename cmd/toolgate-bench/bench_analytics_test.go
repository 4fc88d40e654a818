package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/bench/analyticsload"
	"github.com/toolgate/toolgate/internal/pgtest"
)

// TestBenchAnalyticsCommand seeds a small log in toolgate_bench_analytics, times every URL
// of analyticsload.URLs before and after the rollup and drops the database.
func TestBenchAnalyticsCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (a whole server, evaluation or concurrent run): the full suite, make test, runs it")
	}
	t.Parallel()
	getenv := func(k string) string {
		if k == "DATABASE_URL" {
			return pgtest.ServerURL()
		}
		return ""
	}
	var out, errOut bytes.Buffer
	args := []string{"analytics", "--tools", "60", "--searches", "800", "--days", "3", "--runs", "3", "--warmup", "1", "--live-runs", "1"}
	if code := run(args, getenv, &out, &errOut); code != 0 {
		t.Fatalf("bench analytics: exit %d: %s", code, errOut.String())
	}
	report, live, ok := strings.Cut(out.String(), "The same requests before the rollup")
	if !ok || !strings.Contains(report, "### Search analytics on the rollups (toolgate bench analytics)") ||
		!strings.Contains(report, "Seeded 60 tools and 800 searches over 3 days in ") {
		t.Fatalf("bench analytics output:\n%s", out.String())
	}
	for _, u := range analyticsload.URLs {
		if !strings.Contains(report, "| GET "+u+" | 1 | 3 | 0 |") || !strings.Contains(live, "| GET "+u+" | 1 | 1 | 0 |") {
			t.Errorf("no error-free rows for %s:\n%s", u, out.String())
		}
	}
	for _, u := range analyticsload.ConsolePageURLs {
		if !strings.Contains(report, "| GET "+u+" | 1 | 3 | 0 |") {
			t.Errorf("no error-free row for the console's %s:\n%s", u, out.String())
		}
	}
	for _, bad := range [][]string{{"analytics", "--days", "0"}, {"analytics", "--searches", "-1"}} {
		if code := run(bad, getenv, &out, &errOut); code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage)", bad, code)
		}
	}
}
