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

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/mcptest"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
	"github.com/toolgate/toolgate/internal/upstreamauth"
	"github.com/toolgate/toolgate/jobs"
)

// TestConsoleManagesSources: an operator adds an MCP server from the catalog page and
// watches its page fill as the sync and the enrichment run (no reload), changes its
// settings, and deletes it after a confirmation; a catalog whose tools are not JSON is
// refused in the page with nothing stored.
func TestConsoleManagesSources(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
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
	crm := mcptest.NewHTTP(t, []catalog.Tool{testfactory.Tool("lookup", "Look up a customer."), testfactory.Tool("note", "Add a note to a customer.")}, mcptest.Normal, 0)

	b := newBrowser(t)
	b.open(srv.URL+"/ui/catalog", "#source-form")
	if hidden := eval[bool](b, `document.getElementById('src-tools').closest('label').hidden`); !hidden {
		t.Error("the catalog's tools field is shown for an MCP server over HTTP")
	}
	b.do("add an MCP source", chromedp.SendKeys(chromedp.CSS("#src-name"), "crm"),
		chromedp.SendKeys(chromedp.CSS("#src-url"), crm.URL), chromedp.Click(chromedp.CSS("#src-create")))
	b.wait(`//main/h1[text()="crm"]`)
	if loc := b.location(); !strings.HasSuffix(loc, "/ui/catalog/crm") {
		t.Errorf("location after adding: %s", loc)
	}
	// The page follows the sync and the enrichment by itself.
	b.wait(`//div[@id="tools"]//a[text()="crm__note"]`)
	b.wait(`//div[@id="runs"]//span[contains(@class,"badge")][text()="succeeded"]`)
	b.wait(`//div[@id="source-head"]//span[contains(@class,"badge")][text()="fully enriched"]`)
	b.shot("source-added")

	// Settings: syncs on demand only, review mode on.
	b.do("change the settings", chromedp.SetValue(chromedp.CSS("#set-interval"), "off"),
		chromedp.Click(chromedp.CSS("#set-review")), chromedp.Click(chromedp.CSS("#set-save")))
	b.wait(`//div[@id="status"]/div[contains(., "Settings of crm saved.")]`)
	src, err := db.New(pool).GetSourceByName(ctx, "crm")
	if err != nil || !src.ReviewMode {
		t.Errorf("after saving the settings: %+v %v", src, err)
	}

	// Delete: asked first, then gone with its tools.
	b.click("#delete-source")
	b.wait(`//span[@class="question"][contains(., "Delete crm and its 2 tools?")]`)
	b.click("button.confirm")
	b.wait("#source-form")
	if loc := b.location(); !strings.HasSuffix(loc, "/ui/catalog") {
		t.Errorf("location after deleting: %s", loc)
	}
	var left int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM sources) + (SELECT count(*) FROM tools)`).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d sources and tools left after the delete (%v)", left, err)
	}

	// A catalog whose tools are not JSON: refused in the page, nothing stored.
	b.do("add a bad catalog", chromedp.SetValue(chromedp.CSS("#src-kind"), "catalog"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('src-kind').dispatchEvent(new Event('change'))`),
		chromedp.SendKeys(chromedp.CSS("#src-name"), "pushed"), chromedp.SendKeys(chromedp.CSS("#src-tools"), "{not json"),
		chromedp.Click(chromedp.CSS("#src-create")))
	b.wait(`//div[@id="status"]/div[contains(., "tools: not JSON")]`)
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM sources`).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d sources after a refused catalog (%v)", left, err)
	}
}

// TestConsoleSourceAuthorization: the page of a source configured for OAuth shows its
// authorization state with the authorization server's error, and the Authorize and Revoke
// actions; Revoke, after a confirmation, leaves it unauthorized.
func TestConsoleSourceAuthorization(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := upstreamauth.ParseKeys(upstreamauth.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(api.Deps{Pool: pool, River: rc, Logger: log, Open: true,
		UpstreamAuth: upstreamauth.New(pool, upstreamauth.Settings{Keys: keys}, log)}))
	t.Cleanup(srv.Close)
	if _, err := pool.Exec(ctx, `WITH s AS (INSERT INTO sources (name, kind, config)
		VALUES ('tracker', 'mcp_http', '{"url": "https://tracker.example.com/mcp", "oauth": {}}') RETURNING id)
		INSERT INTO source_oauth (source_id, state, error, issuer) SELECT id, 'refresh_failed',
		'refresh refused: the token endpoint refused (400 invalid_grant)', 'https://auth.example.com' FROM s`); err != nil {
		t.Fatal(err)
	}

	b := newBrowser(t)
	b.open(srv.URL+"/ui/catalog/tracker", "#authorization")
	b.wait(`//div[@id="authorization"]//span[contains(@class,"badge")][text()="refresh failed"]`)
	if got := b.text("#authorization-error"); !strings.Contains(got, "invalid_grant") {
		t.Errorf("authorization error shown: %q", got)
	}
	b.wait("#authorize-source")
	b.shot("source-authorization")
	b.click("#revoke-source")
	b.wait(`//span[@class="question"][contains(., "Forget the tokens of tracker")]`)
	b.click("button.confirm")
	b.wait(`//div[@id="authorization"]//span[contains(@class,"badge")][text()="unauthorized"]`)
	var state string
	if err := pool.QueryRow(ctx, `SELECT state FROM source_oauth`).Scan(&state); err != nil || state != upstreamauth.StateUnauthorized {
		t.Errorf("state after revoke: %q %v", state, err)
	}
}
