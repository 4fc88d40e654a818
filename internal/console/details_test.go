package console_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
	"github.com/toolgate/toolgate/jobs"
)

// TestConsoleShowsWhatItSays checks the console's details against what it claims: the
// Results field's 10 is what the search asks for, a tool's component shares add up to
// 100%, an unknown tool shows its 404 and nothing under it, the tool lists of Analytics
// fit a 1440 px window and name the order they are in, and an interval chart's row labels
// are never cut at its left edge.
func TestConsoleShowsWhatItSays(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	t.Parallel()
	st := newStack(t, true)
	b := newBrowser(t)

	// The deep link names no k: the form says 10, and 10 are asked for (the server's
	// default is 5); the catalog holds more than 10 tools and hybrid mode fills k.
	b.open(st.url+"/ui/search?q=weather", "#results li")
	if got := b.text("#k"); got != "" {
		t.Fatalf("#k has text %q", got)
	}
	if v := eval[string](b, `document.getElementById('k').value`); v != "10" {
		t.Errorf("Results field shows %q", v)
	}
	if n := eval[int](b, `document.querySelectorAll('#results > li').length`); n != 10 {
		t.Errorf("/ui/search?q=weather shows %d results, the Results field says 10", n)
	}

	// A tool's component shares: each kind's share of the vector split between its
	// components, adding up to 100%.
	b.open(st.url+"/ui/tool/acme__get_weather", "table.components")
	shares := eval[[]string](b, `[...document.querySelectorAll('table.components tbody tr td:last-child')].map(e => e.textContent)`)
	total := 0.0
	for _, s := range shares {
		var v float64
		if _, err := fmt.Sscan(strings.TrimSuffix(s, "%"), &v); err != nil {
			t.Fatalf("share %q: %v", s, err)
		}
		total += v
	}
	if total < 99.5 || total > 100.5 {
		t.Errorf("component shares %v add up to %.1f%%", shares, total)
	}

	// An unknown tool: its 404, and no history section saying "No recorded change".
	b.open(st.url+"/ui/tool/acme__nope", "#tool .error")
	b.settled()
	if body := eval[string](b, `document.querySelector('main').innerText`); strings.Contains(body, "No recorded change") || strings.Contains(body, "Definition history") {
		t.Errorf("unknown tool page shows a history:\n%s", body)
	}

	// Analytics at 1440 px: the three tool lists stay inside their columns, and the first
	// list is titled by the order it is in (most called first).
	// A tool whose name has no break point, as generated names often are.
	_, res := testfactory.Catalog(context.Background(), t, st.pool, "wide", []catalog.Tool{
		testfactory.Tool("fetch_the_quarterly_consolidated_financial_statements_report", "Fetch a company's quarterly report."),
	}, nil)
	testfactory.Enrich(context.Background(), t, testfactory.LocalEnricher(st.pool, 2), res.Changed...)
	st.label(t, "what is the weather in Paris", 6)
	b.do("resize to 1440 px", chromedp.EmulateViewport(1440, 900))
	b.open(st.url+"/ui/analytics?days=7", "#an-tools table")
	b.settled()
	overflow := eval[[]string](b, `[document.querySelector('#an-tools .three'), ...document.querySelectorAll('#an-tools .three > div')]
		.filter(d => d.scrollWidth > d.clientWidth + 1).map(d => d.querySelector('h3') ? d.querySelector('h3').textContent : 'the three lists')`)
	if len(overflow) > 0 {
		t.Errorf("analytics tool lists wider than their column at 1440 px: %v", overflow)
	}
	if wide := eval[bool](b, `document.documentElement.scrollWidth > window.innerWidth`); wide {
		t.Error("the analytics page scrolls sideways at 1440 px")
	}
	if got := eval[[]string](b, `[...document.querySelectorAll('#an-tools h3')].map(e => e.textContent)`); strings.Join(got, "|") != "Most called|Returned, never called|Never returned" {
		t.Errorf("tool lists: %v", got)
	}
	if got := eval[string](b, `document.querySelector('#an-tools table.popular thead th:nth-child(2)').textContent`); got != "Called" {
		t.Errorf("the most called list's first number is %q", got)
	}

	// An interval chart with long row labels (an experiment's arms are "arm (profile)"):
	// every label starts inside the chart.
	clipped := eval[int](b, `import('/ui/assets/js/chart.js').then(c => {
		const rows = [
			{label: 'control (default)', value: 0.5, lo: 0.4, hi: 0.6},
			{label: 'candidate (questions-heavy-with-a-long-name)', value: 0.6, lo: 0.5, hi: 0.7},
			{label: 'candidate − control', value: 0.1, lo: -0.1, hi: 0.3},
		];
		const el = c.intervalChart(rows, {zero: true, width: 580});
		document.querySelector('main').append(el);
		return [...el.querySelectorAll('.row-label')].filter(t => t.getBBox().x < 0).length;
	})`)
	if clipped != 0 {
		t.Errorf("%d interval chart row labels cut at the left edge", clipped)
	}
}

// TestConsoleEmptyCatalogAnalytics: a server with no tool says so in Analytics, rather
// than that every tool was returned.
func TestConsoleEmptyCatalogAnalytics(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	t.Parallel()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log, Embedder: embed.NewLocal(384), Enricher: enrich.Heuristic{}}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(api.Deps{Pool: pool, River: rc, Logger: log, Keys: auth.NewKeys(pool, time.Now), Open: true,
		Search: search.New(pool, embed.NewLocal(384), search.DefaultSettings(), log)}))
	t.Cleanup(srv.Close)

	b := newBrowser(t)
	b.open(srv.URL+"/ui/analytics?days=7", "#an-tools")
	b.settled()
	got := b.text("#an-tools")
	if strings.Contains(got, "Every tool was returned") || !strings.Contains(got, "The catalog has no searchable tool.") {
		t.Errorf("empty catalog's tool lists:\n%s", got)
	}
}
