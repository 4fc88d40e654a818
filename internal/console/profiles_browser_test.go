package console_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
	"github.com/toolgate/toolgate/jobs"
)

// newLiveStack is an open-mode toolgate server over a fresh database holding acme (a
// weather and an email tool) and two demo companies, enriched, whose River client works
// the jobs the console queues, as a server does.
func newLiveStack(t *testing.T) (string, *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if _, err := db.New(pool).EnsureSearchLogPartitions(ctx, 2); err != nil {
		t.Fatal(err)
	}
	_, res := testfactory.Catalog(ctx, t, pool, "acme", []catalog.Tool{
		testfactory.Tool("get_weather", "Get the current weather and the forecast for a city."),
		testfactory.Tool("send_email", "Send an email message to a recipient."),
	}, nil)
	ids := append(res.Changed, testfactory.DemoCatalog(ctx, t, pool, 2, nil)...)
	testfactory.Enrich(ctx, t, testfactory.LocalEnricher(pool, 2), ids...)
	if _, err := lexical.Flush(ctx, pool); err != nil {
		t.Fatal(err)
	}
	deps := jobs.Deps{Pool: pool, Logger: log, Embedder: embed.NewLocal(384), Enricher: enrich.Heuristic{}, Questions: 2}
	worker, err := jobs.NewClient(deps, jobs.Options{Work: true, MaxWorkers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { worker.Stop(context.Background()) })
	srv := httptest.NewServer(api.New(api.Deps{Pool: pool, River: worker, Logger: log, Keys: auth.NewKeys(pool, time.Now), Open: true,
		Search: search.New(pool, embed.NewLocal(384), search.DefaultSettings(), log)}))
	t.Cleanup(srv.Close)
	return srv.URL, pool
}

// TestConsoleEditsProfiles: an operator creates a profile from the Profiles page, watches
// its re-weight finish without a reload, compares its top results with the active
// profile's on a query, activates it and deletes another one, each after a confirmation;
// Edit fills the form with a profile's weights.
func TestConsoleEditsProfiles(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	t.Parallel()
	url, pool := newLiveStack(t)
	ctx := context.Background()
	b := newBrowser(t)

	b.open(url+"/ui/profiles", "#profile-form")
	b.settled()
	// Edit fills the form with the profile's definition.
	b.click(`button.edit[data-profile="var-1"]`)
	if got := eval[[]string](b, `['pf-name', 'pf-strategy', 'pf-w-question', 'pf-w-topics'].map(id => document.getElementById(id).value)`); strings.Join(got, ",") != "var-1,tdwa,0.4," {
		t.Errorf("form after Edit of var-1: %q", got)
	}

	// A new profile that weighs the name alone, compared on two queries. The page is never
	// reloaded: the marker set here survives.
	b.do("create a profile", chromedp.Evaluate[chromedp.Void](`window.notReloaded = true; document.getElementById('profile-form').reset()`),
		chromedp.SendKeys(chromedp.CSS("#pf-name"), "names-only"), chromedp.SendKeys(chromedp.CSS("#pf-w-name"), "1"),
		chromedp.SendKeys(chromedp.CSS("#pf-lexical"), "0.5"), chromedp.SendKeys(chromedp.CSS("#pf-vector"), "2"),
		chromedp.SendKeys(chromedp.CSS("#pf-queries"), "send an email message\nweather forecast for a city"),
		chromedp.Click(chromedp.CSS("#pf-save")))
	b.wait(`//div[@id="status"]/div[contains(., "names-only created; re-weight queued")]`)
	b.wait("#compare table.diff-table")
	if !eval[bool](b, `window.notReloaded === true`) {
		t.Error("the page was reloaded")
	}
	if got := eval[[]string](b, `[...document.querySelectorAll('#compare .diff-query')].map(e => e.textContent)`); strings.Join(got, "|") != "send an email message|weather forecast for a city" {
		t.Errorf("queries compared: %q", got)
	}
	if got := eval[[]string](b, `[...document.querySelector('#compare table.diff-table').querySelectorAll('thead th')].map(e => e.textContent)`); strings.Join(got, "|") != "#|default (active, before)|names-only" {
		t.Errorf("comparison columns: %q", got)
	}
	rows := eval[[]string](b, `[...document.querySelectorAll('#compare .diff')[0].querySelectorAll('tbody tr')].map(r => r.cells[1].textContent + ' | ' + r.cells[2].textContent)`)
	if len(rows) != 5 || !strings.HasPrefix(rows[0], "acme__send_email") {
		t.Errorf("comparison of the email query: %q", rows)
	}
	if n := eval[int](b, `document.querySelectorAll('#compare .tool.moved').length`); n == 0 {
		t.Errorf("no tool marked as moved between default and a profile weighing names only: %q", rows)
	}
	b.wait(`//div[@id="profiles"]//th[contains(., "names-only")]`)
	var strategy string
	var lexicalW, vectorW *float64
	var vectors int
	if err := pool.QueryRow(ctx, `SELECT p.strategy, p.weight_lexical, p.weight_vector, (SELECT count(*) FROM tool_vectors v WHERE v.set_id = p.current_set)
		FROM weight_profiles p WHERE p.name = 'names-only'`).Scan(&strategy, &lexicalW, &vectorW, &vectors); err != nil {
		t.Fatal(err)
	}
	if strategy != "tdwa" || lexicalW == nil || *lexicalW != 0.5 || vectorW == nil || *vectorW != 2 || vectors == 0 {
		t.Errorf("names-only stored as %s, fusion %v/%v, %d vectors", strategy, lexicalW, vectorW, vectors)
	}
	b.shot("profiles-compare")

	// Activate asks first.
	b.click(`button.activate[data-profile="names-only"]`)
	b.wait(`//span[@class="question"][contains(., "Make names-only the profile every search uses?")]`)
	b.click("button.confirm")
	b.wait(`//div[@id="status"]/div[contains(., "names-only is the active profile.")]`)
	var active string
	if err := pool.QueryRow(ctx, `SELECT name FROM weight_profiles WHERE is_active`).Scan(&active); err != nil || active != "names-only" {
		t.Errorf("active profile after Activate: %q %v", active, err)
	}

	// Delete asks first; the active profile has no Delete (once the table shows it active:
	// the table is read again after the answer).
	b.wait(`//table[contains(@class,"side-by-side")]//thead//th[contains(., "names-only")]/span[contains(@class,"badge")][text()="active"]`)
	if n := eval[int](b, `document.querySelectorAll('button.delete[data-profile="names-only"]').length`); n != 0 {
		t.Error("the active profile offers Delete")
	}
	b.click(`button.delete[data-profile="var-2"]`)
	b.wait(`//span[@class="question"][contains(., "Delete var-2 and its vectors?")]`)
	b.click("button.confirm")
	b.wait(`//div[@id="status"]/div[contains(., "var-2 deleted.")]`)
	var left int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM weight_profiles WHERE name = 'var-2'`).Scan(&left); err != nil || left != 0 {
		t.Errorf("var-2 rows after Delete: %d %v", left, err)
	}
}
