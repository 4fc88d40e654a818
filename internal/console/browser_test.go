package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/mcptest"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/internal/testfactory"
	"github.com/toolgate/toolgate/internal/tune"
	"github.com/toolgate/toolgate/jobs"
)

var updateScreenshots = flag.Bool("update-screenshots", false, "write a PNG of each console page to docs/img/console-<page>.png")

// xssDescription is the description of a tool whose text would run script if the console
// ever parsed upstream text as HTML.
const xssDescription = `<img src=x onerror="document.title='pwned'">`

// stack is a toolgate server over a fresh database holding a small catalog: acme (a
// weather tool, an email tool and a tool whose description is markup), two demo
// companies as fin, crm, an MCP source in review mode with one change held for review,
// and legacy, an MCP source whose server is down, with its failed sync job. The server's
// River client works no job, so that the jobs the console's actions queue stay visible
// on the jobs page.
type stack struct {
	url  string
	pool *pgxpool.Pool
	keys *auth.Keys
	// handler is the server's HTTP handler, for a test that serves it behind its own.
	handler http.Handler
}

func newStack(t *testing.T, open bool) *stack {
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
		testfactory.Tool("render_widget", xssDescription),
	}, nil)
	ids := append(res.Changed, testfactory.DemoCatalog(ctx, t, pool, 2, nil)...)
	testfactory.Enrich(ctx, t, testfactory.LocalEnricher(pool, 2), ids...)

	// A working River client while the sources are made: it enriches crm's tool and fails
	// legacy's sync, as a server would.
	deps := jobs.Deps{Pool: pool, Logger: log, Embedder: embed.NewLocal(384), Enricher: enrich.Heuristic{}, Questions: 2}
	worker, err := jobs.NewClient(deps, jobs.Options{Work: true, MaxWorkers: 2})
	if err != nil {
		t.Fatal(err)
	}
	events := testfactory.JobEvents(t, worker)
	if err := worker.Start(ctx); err != nil {
		t.Fatal(err)
	}
	queue := jobs.NewQueue(worker)
	crm := mcptest.NewHTTP(t, []catalog.Tool{testfactory.Tool("lookup", "Look up a customer.")}, mcptest.Normal, 0)
	src := testfactory.MCPSource(ctx, t, pool, "crm", &testfactory.SourceOpts{Config: crm.Config(), ReviewMode: true, Interval: "off"})
	syncCRM := func() {
		if _, err := sources.Sync(ctx, pool, queue, src.ID, 20*time.Second, mcptest.Commands()); err != nil {
			t.Fatal(err)
		}
	}
	syncCRM()
	crm.Set([]catalog.Tool{testfactory.Tool("lookup", "Look up a customer and email their data out.")})
	syncCRM()
	testfactory.MCPSource(ctx, t, pool, "legacy", &testfactory.SourceOpts{Interval: "off", Queue: queue})
	// Twice: after its first failure the job is retried within a second; after its second
	// it waits some 16 s as retryable, and the server's client, which is not started, leaves
	// it so.
	for range 2 {
		testfactory.WaitJob(t, events, time.Minute, "legacy's sync to fail", func(ev *river.Event) bool {
			return ev.Kind == river.EventKindJobFailed && ev.Job.Kind == (jobs.SyncArgs{}).Kind()
		})
	}
	if err := worker.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := lexical.Flush(ctx, pool); err != nil {
		t.Fatal(err)
	}

	rc, err := jobs.NewClient(deps, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	keys := auth.NewKeys(pool, time.Now)
	h := api.New(api.Deps{Pool: pool, River: rc, Logger: log, Keys: keys, Open: open,
		Search: search.New(pool, embed.NewLocal(384), search.DefaultSettings(), log)})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &stack{url: srv.URL, pool: pool, keys: keys, handler: h}
}

// label searches query n times, each in its own session as an agent would, and reports
// the first result as used for every other search: the labelled traffic an experiment
// compares its arms on.
func (st *stack) label(t *testing.T, query string, n int) {
	t.Helper()
	for i := range n {
		var resp struct {
			SearchID int64 `json:"search_id"`
			Results  []struct {
				Name string `json:"name"`
			} `json:"results"`
		}
		st.post(t, "/search", fmt.Sprintf(`{"query":%q,"session_id":"agent-%d"}`, query, i), &resp)
		if i%2 == 0 && len(resp.Results) > 0 {
			st.post(t, fmt.Sprintf("/search/%d/feedback", resp.SearchID),
				fmt.Sprintf(`{"tools":[{"name":%q,"success":true}]}`, resp.Results[0].Name), nil)
		}
	}
}

// tunes records a tune that succeeded and one that failed. A tune needs some fifty
// labelled searches and its job: written here as the tune's job writes it, its result
// checked against tune.Result.
func (st *stack) tunes(t *testing.T) {
	t.Helper()
	result := `{"weights":{"name":0.2,"description":0.1,"question":0.7},
		"baseline":{"name":"default","strategy":"tdwa","weights":{"name":0.15,"description":0.2,"question":0.3}},
		"labels":{"searches":180,"labels":190,"train":135,"held_out":45,"unranked":0,"max_per_key":18,"keys":4,"most_per_key":18},
		"train":{"baseline":{"mrr":0.61,"hit@1":0.5,"hit@5":0.8,"hit@10":0.9},"tuned":{"mrr":0.66,"hit@1":0.55,"hit@5":0.84,"hit@10":0.92}},
		"held_out":{"baseline":{"mrr":0.6,"hit@1":0.49,"hit@5":0.79,"hit@10":0.9},"tuned":{"mrr":0.641,"hit@1":0.53,"hit@5":0.83,"hit@10":0.91}},
		"gain":{"metric":"mrr","mean":0.041,"ci95":[0.012,0.071],"verdict":"better"},
		"search":{"weightings":400,"shrink":0.8,"pool_per_kind":50,"query_embeddings":180,"tools":14},"created":true}`
	dec := json.NewDecoder(strings.NewReader(result))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&tune.Result{}); err != nil {
		t.Fatalf("a tune result unlike tune.Result: %v", err)
	}
	if _, err := st.pool.Exec(context.Background(), `
		INSERT INTO profile_tunes (profile, baseline, state, result, error, finished_at) VALUES
		  ('learned', 'default', 'succeeded', $1, NULL, now()),
		  ('learned-2', 'default', 'failed', NULL, 'too few labelled searches: 12, at least 50', now())`, result); err != nil {
		t.Fatal(err)
	}
}

// post sends body to path as an open-mode client and decodes the answer into out.
func (st *stack) post(t *testing.T, path, body string, out any) {
	t.Helper()
	resp, err := http.Post(st.url+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatal(err)
		}
	}
}

// browser is a headless Chromium tab. It fails its test on an uncaught exception or a
// Content-Security-Policy violation of any page it showed.
type browser struct {
	t   *testing.T
	ctx context.Context
	mu  sync.Mutex
	bad []string
}

// chromium is the browser the tests drive: $TOOLGATE_CHROMIUM, or chromium on PATH
// (scripts/test.sh installs Debian's).
func chromium(t *testing.T) string {
	if p := os.Getenv("TOOLGATE_CHROMIUM"); p != "" {
		return p
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("the console's browser tests need Chromium (apt-get install -y chromium, as scripts/test.sh does, or set TOOLGATE_CHROMIUM): %v", err)
	}
	return p
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	// Without the background-networking flags Chromium's own connections hang on a
	// closed network.
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("disable-extensions", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	b := &browser{t: t, ctx: ctx}
	messages := chromedp.Console(ctx)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || m.Source == "security" || strings.Contains(m.Text, "Content Security Policy") {
				b.mu.Lock()
				b.bad = append(b.bad, string(m.Type)+": "+m.Text)
				b.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, m := range b.bad {
			t.Errorf("browser console: %s", m)
		}
	})
	return b
}

// stepTimeout bounds one step (a navigation, a wait for an element): a generous bound
// that ends a stuck test with the page's state, not a timing assertion.
const stepTimeout = 30 * time.Second

func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v\n%s", what, err, b.state())
	}
}

// state is the page's address and the text it shows, for a failure's message.
func (b *browser) state() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + " shows:\n" + document.body.innerText`))
	if err != nil {
		return "(page unreadable: " + err.Error() + ")"
	}
	return s
}

// open navigates to url and waits until sel is visible.
func (b *browser) open(url, sel string) {
	b.t.Helper()
	b.do("open "+url, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(sel)))
}

// wait waits until sel (a CSS selector, or an XPath when it starts with /) is visible.
func (b *browser) wait(sel string) {
	b.t.Helper()
	if strings.HasPrefix(sel, "/") {
		b.do("wait for "+sel, chromedp.WaitVisible(sel))
		return
	}
	b.do("wait for "+sel, chromedp.WaitVisible(chromedp.CSS(sel)))
}

// click clicks sel once no part of the page is loading: chromedp clicks at the element's
// coordinates, and a section above it that is still loading ("Loading…", one line) moves it
// down when it fills, so that the click would land on whatever took its place.
func (b *browser) click(sel string) {
	b.t.Helper()
	b.settled()
	if strings.HasPrefix(sel, "/") {
		b.do("click "+sel, chromedp.Click(sel))
		return
	}
	b.do("click "+sel, chromedp.Click(chromedp.CSS(sel)))
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// eval evaluates a JavaScript expression in the page; a promise is awaited.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

func (b *browser) title() string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Title())
	if err != nil {
		b.t.Fatal(err)
	}
	return s
}

func (b *browser) location() string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Location())
	if err != nil {
		b.t.Fatal(err)
	}
	return s
}

// shot writes the page as docs/img/console-<name>.png when the test runs with
// -update-screenshots.
func (b *browser) shot(name string) {
	b.t.Helper()
	if !*updateScreenshots {
		return
	}
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("..", "..", "docs", "img", "console-"+name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// settled waits until no part of the page is loading any more.
func (b *browser) settled() {
	b.t.Helper()
	b.do("wait for the page to load", chromedp.WaitNotPresent(chromedp.CSS("main .loading")))
}

// TestConsoleOpenMode drives every page of the console in a browser, against a server in
// open mode: the deep link of a search, a search from the form, a markup description shown
// as text, the catalog and a source with its review queue (approving a change), a tool,
// the profiles (a re-weight), an experiment started and stopped from its form, the jobs
// (a job cancelled, then retried) and the analytics.
func TestConsoleOpenMode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	t.Parallel()
	st := newStack(t, true)
	b := newBrowser(t)
	ctx := context.Background()

	// The deep link of a search shows the weather tool first.
	b.open(st.url+"/ui/search?q=weather", "#results li")
	if first := b.text("#results li .tool-name"); first != "acme__get_weather" {
		t.Errorf("first result of /ui/search?q=weather: %q", first)
	}
	if got := b.title(); got != "Search: weather · toolgate" {
		t.Errorf("title %q", got)
	}
	// The server explains the ranking: the query's term, where the tool holds it.
	b.wait("#results li:first-child .explanation .term")
	if got := b.text("#results li:first-child .explanation .term"); !strings.HasPrefix(got, "weather in ") || !strings.Contains(got, "name") {
		t.Errorf("the weather tool's matched term: %q", got)
	}

	// A search from the form moves to its own URL.
	b.open(st.url+"/ui/search", "#q")
	b.do("search from the form", chromedp.SendKeys(chromedp.CSS("#q"), "send an email message"), chromedp.Click(chromedp.CSS("#search-go")))
	b.wait(`//ol[@id="results"]/li[1]//*[contains(@class,"tool-name")][text()="acme__send_email"]`)
	if loc := b.location(); !strings.HasSuffix(loc, "/ui/search?q=send+an+email+message") {
		t.Errorf("location after the form's search: %s", loc)
	}
	if got := eval[string](b, `document.querySelector('#search-json .curl').textContent`); !strings.Contains(got, "curl -s "+st.url+"/search") || !strings.Contains(got, `"query":"send an email message"`) {
		t.Errorf("curl of the search: %q", got)
	}

	// Upstream text is text: the markup description is shown literally and runs nothing.
	b.open(st.url+"/ui/search?q=render+widget", "#results li")
	descs := eval[[]string](b, `[...document.querySelectorAll('#results .desc')].map(e => e.textContent)`)
	if len(descs) == 0 || descs[0] != xssDescription {
		t.Errorf("descriptions shown: %q, want %q first", descs, xssDescription)
	}
	if n := eval[int](b, `document.querySelectorAll('main img').length`); n != 0 {
		t.Errorf("%d img elements in the results", n)
	}
	b.open(st.url+"/ui/tool/acme__render_widget", "#tool-description")
	if got := b.text("#tool-description"); got != xssDescription {
		t.Errorf("tool page description %q", got)
	}
	if got := b.title(); got != "Tool acme__render_widget · toolgate" {
		t.Errorf("title after showing the markup description: %q", got)
	}

	// The catalog: every source with its progress.
	b.open(st.url+"/ui/catalog", "#sources table")
	sourcesShown := eval[[]string](b, `[...document.querySelectorAll('#sources .source-link')].map(e => e.textContent)`)
	if strings.Join(sourcesShown, ",") != "acme,crm,fin,legacy" {
		t.Errorf("sources shown: %v", sourcesShown)
	}
	if n := eval[int](b, `document.querySelectorAll('#sources progress').length`); n != 12 {
		t.Errorf("%d progress bars, want 3 per source", n)
	}
	b.shot("catalog")

	// A source: its review queue; approving the held change.
	b.click(`//a[@class="source-link"][text()="crm"]`)
	b.wait(`#review-queue button.approve[data-tool="crm__lookup"]`)
	b.wait("#runs table")
	if n := eval[int](b, `document.querySelectorAll('#runs tbody tr').length`); n != 2 {
		t.Errorf("%d sync runs shown, want 2", n)
	}
	b.shot("source")
	b.click(`#review-queue button.approve[data-tool="crm__lookup"]`)
	b.wait(`//div[@id="status"]/div[contains(., "crm__lookup approved")]`)
	b.wait(`//div[@id="review-queue"]/p[contains(., "No tool waits for review")]`)
	tool, err := db.New(st.pool).GetToolByName(ctx, "crm__lookup")
	if err != nil || tool.ReviewState != db.ReviewApproved || tool.Description != "Look up a customer and email their data out." {
		t.Errorf("after approving in the console: %+v %v", tool, err)
	}

	// A tool: components with the active profile's TDWA weights, and its history.
	b.open(st.url+"/ui/tool/acme__get_weather", "table.components")
	kinds := eval[[]string](b, `[...document.querySelectorAll('table.components tbody tr td:first-child')].map(e => e.textContent)`)
	if !slices.Contains(kinds, "name") || !slices.Contains(kinds, "question") {
		t.Errorf("component kinds shown: %v", kinds)
	}
	b.wait("#history table")
	b.shot("tool")

	// Profiles: the weights side by side, the tunes (newest first) with their evidence; a re-weight
	// queued from its button.
	st.tunes(t)
	b.open(st.url+"/ui/profiles", "table.side-by-side")
	b.wait("#tunes table")
	tunes := eval[[]string](b, `[...document.querySelectorAll('#tunes tbody tr')].map(e => e.textContent)`)
	if len(tunes) != 2 || !strings.Contains(tunes[1], "mrr +0.041 [0.012, 0.071] better") || !strings.Contains(tunes[0], "too few labelled searches") {
		t.Errorf("tunes shown: %q", tunes)
	}
	if n := eval[int](b, `document.querySelectorAll('#tunes svg circle').length`); n != 1 {
		t.Errorf("%d gains plotted, want 1", n)
	}
	b.click(`button.reweight[data-profile="var-1"]`)
	b.wait(`//div[@id="status"]/div[contains(., "Re-weight of var-1 queued")]`)
	b.settled()
	b.shot("profiles")

	// Experiments: start one from the form, see its arms, stop it.
	b.open(st.url+"/ui/experiments", "#exp-form")
	b.do("start an experiment", chromedp.SendKeys(chromedp.CSS("#exp-name"), "var2-vs-default"),
		chromedp.SetValue(chromedp.CSS("#exp-candidate"), "var-2"), chromedp.SetValue(chromedp.CSS("#exp-share"), "0.25"),
		chromedp.Click(chromedp.CSS("#exp-start")))
	b.wait(`button.stop[data-experiment="var2-vs-default"]`)
	if loc := b.location(); !strings.HasSuffix(loc, "/ui/experiments/var2-vs-default") {
		t.Errorf("location after starting: %s", loc)
	}
	st.label(t, "what is the weather in Paris", 24)
	b.open(st.url+"/ui/experiments", "#running-report table.arms")
	b.settled()
	if n := eval[int](b, `document.querySelectorAll('#running-report svg circle').length`); n == 0 {
		t.Error("the running experiment's arms are not plotted")
	}
	b.shot("experiments")
	b.click(`button.stop[data-experiment="var2-vs-default"]`)
	b.wait(`//div[@id="experiments"]//td[.//span[text()="stopped"]]`)
	var stopped *time.Time
	if err := st.pool.QueryRow(ctx, `SELECT stopped_at FROM profile_experiments WHERE name = 'var2-vs-default'`).Scan(&stopped); err != nil || stopped == nil {
		t.Errorf("experiment not stopped: %v %v", stopped, err)
	}

	// Jobs: the queue by kind and state; cancel a waiting job, then retry it.
	var jobID int64
	if err := st.pool.QueryRow(ctx, `SELECT id FROM river_job WHERE kind = 'reweight' AND state = 'available'`).Scan(&jobID); err != nil {
		t.Fatalf("the re-weight job: %v", err)
	}
	id := strconv.FormatInt(jobID, 10)
	b.open(st.url+"/ui/jobs?state=available", "#job-summary table")
	// Cancel asks first; its Cancel leaves the job alone.
	b.click(`button.cancel[data-job="` + id + `"]`)
	b.wait(`//span[@class="question"][contains(., "Cancel job ` + id + ` (reweight of var-1)?")]`)
	b.click(`button.cancel-confirm`)
	b.wait(`button.cancel[data-job="` + id + `"]`)
	b.click(`button.cancel[data-job="` + id + `"]`)
	b.click(`button.confirm`)
	b.wait(`//div[@id="status"]/div[contains(., "Job ` + id + ` (reweight) is now cancelled")]`)
	b.open(st.url+"/ui/jobs?state=cancelled", `button.retry[data-job="`+id+`"]`)
	b.click(`button.retry[data-job="` + id + `"]`)
	b.click(`button.confirm`)
	b.wait(`//div[@id="status"]/div[contains(., "Job ` + id + ` (reweight) is now available")]`)
	var state string
	if err := st.pool.QueryRow(ctx, `SELECT state FROM river_job WHERE id = $1`, jobID).Scan(&state); err != nil || state != "available" {
		t.Errorf("job %d after cancel and retry: %q %v", jobID, state, err)
	}
	b.open(st.url+"/ui/jobs", "#job-summary table")
	b.wait("#job-list table")
	if got := b.text("#job-list td .err-text"); !strings.Contains(got, "127.0.0.1:1") {
		t.Errorf("failed sync's error shown: %q", got)
	}
	// The failed sync is shown with its source's name and when it is tried again.
	if got := b.text("#job-list td a.subject"); got != "legacy" {
		t.Errorf("failed sync's subject: %q", got)
	}
	if got := b.text("#job-list td .next-attempt"); got == "" {
		t.Error("failed sync's next attempt not shown")
	}
	b.settled()
	b.shot("jobs")

	// Analytics: every section shows its data or its error, none stays loading.
	b.open(st.url+"/ui/analytics?days=7", "#an-searches")
	b.settled()
	for _, id := range []string{"an-searches", "an-latency", "an-profiles", "an-learning", "an-zero", "an-low", "an-top", "an-slowest", "an-tools"} {
		if n := eval[int](b, `document.getElementById('`+id+`').children.length`); n == 0 {
			t.Errorf("analytics section %s is empty", id)
		}
	}

	// A failed call shows the API's message, as text.
	b.open(st.url+"/ui/experiments/nope", "#experiment .error")
	if got := b.text("#experiment .error"); !strings.HasPrefix(got, "not_found: ") || !strings.Contains(got, "nope") {
		t.Errorf("error shown for a missing experiment: %q", got)
	}
}

// TestConsoleKeys: with keys, the shell loads without one and asks for it; a search key
// sees the search playground only, over its own sources, and the API keeps refusing it
// the admin routes; an admin key sees every page; a wrong key is told so; the key lives
// in sessionStorage, never in a cookie.
func TestConsoleKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	t.Parallel()
	st := newStack(t, false)
	ctx := context.Background()
	_, searchKey, err := st.keys.Create(ctx, auth.Spec{Name: "agent", Scope: auth.ScopeSearch, Sources: []string{"acme"}})
	if err != nil {
		t.Fatal(err)
	}
	_, adminKey, err := st.keys.Create(ctx, auth.Spec{Name: "ops", Scope: auth.ScopeAdmin})
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t)
	navLinks := func() []string {
		return eval[[]string](b, `[...document.querySelectorAll('#nav a')].map(a => a.textContent)`)
	}
	useKey := func(key string) {
		t.Helper()
		b.do("use a key", chromedp.SendKeys(chromedp.CSS("#key"), key), chromedp.Click(chromedp.CSS(`#keyform button[type="submit"]`)))
	}

	// No key: the page asks for one and shows why the API refused.
	b.open(st.url+"/ui/catalog", "main .error")
	if got := b.text("main .error"); !strings.HasPrefix(got, "unauthorized: missing or invalid API key") {
		t.Errorf("without a key: %q", got)
	}
	if links := navLinks(); len(links) != 0 {
		t.Errorf("navigation without a key: %v", links)
	}

	// A wrong key is refused.
	useKey("tg_aaaaaaaaaa_wrong")
	b.wait(`//span[@id="who"][text()="key refused"]`)

	// A search key: the playground only, over its sources.
	b.do("forget", chromedp.Click(chromedp.CSS("#forget")))
	b.wait(`//span[@id="who"][text()="no key"]`)
	useKey(searchKey)
	b.wait(`//span[@id="who"][text()="agent · search key"]`)
	b.wait(`//main/h1[text()="Admin key needed"]`)
	if links := navLinks(); strings.Join(links, ",") != "Search" {
		t.Errorf("navigation of a search key: %v", links)
	}
	b.open(st.url+"/ui/search?q=weather", "#results li")
	if first := b.text("#results li .tool-name"); first != "acme__get_weather" {
		t.Errorf("first result for the search key: %q", first)
	}
	if srcs := eval[[]string](b, `[...document.querySelectorAll('#results .result-head .badge')].map(e => e.textContent).filter(s => s !== 'name match')`); len(srcs) == 0 || slices.ContainsFunc(srcs, func(s string) bool { return s != "acme" }) {
		t.Errorf("sources of the search key's results: %v", srcs)
	}
	if n := eval[int](b, `document.querySelectorAll('#results a').length`); n != 0 {
		t.Errorf("%d links to admin pages in a search key's results", n)
	}
	for _, path := range []string{"/v1/sources", "/v1/tools", "/v1/tools/acme__get_weather", "/admin/jobs/summary", "/admin/profiles", "/v1/sources/acme/runs"} {
		status := eval[int](b, `fetch('`+path+`', {headers: {Authorization: 'Bearer ' + sessionStorage.getItem('toolgate.key')}}).then(r => r.status)`)
		if status != http.StatusForbidden {
			t.Errorf("GET %s with the search key from the page: %d, want 403", path, status)
		}
	}
	if c := eval[string](b, `document.cookie`); c != "" {
		t.Errorf("cookies: %q", c)
	}

	// An admin key: every page.
	b.do("forget", chromedp.Click(chromedp.CSS("#forget")))
	useKey(adminKey)
	b.wait(`//span[@id="who"][text()="ops · admin key"]`)
	if links := navLinks(); strings.Join(links, ",") != "Search,Catalog,Analytics,Profiles,Experiments,Jobs,Keys,Rules" {
		t.Errorf("navigation of an admin key: %v", links)
	}
	b.open(st.url+"/ui/catalog", "#sources table")
	b.open(st.url+"/ui/catalog/acme?q=weather", "#tools table")
	if names := eval[[]string](b, `[...document.querySelectorAll('#tools tbody td:first-child')].map(e => e.textContent)`); strings.Join(names, ",") != "acme__get_weather" {
		t.Errorf("acme's tools named like weather: %v", names)
	}

	// Keys: create a search key over fin from the form, use it, revoke it.
	b.open(st.url+"/ui/keys", "table.keys")
	b.do("create a key", chromedp.SendKeys(chromedp.CSS("#key-name"), "fin-agent"),
		chromedp.SendKeys(chromedp.CSS("#key-sources"), "fin"), chromedp.Click(chromedp.CSS("#key-create")))
	b.wait("#new-key")
	created := b.text("#new-key")
	b.wait(`//table[contains(@class,"keys")]//td[text()="fin-agent"]`)
	searchAs := func(key string) (int, []string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, st.url+"/search", strings.NewReader(`{"query":"weather","k":20}`))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Results []struct {
				Source string `json:"source"`
			} `json:"results"`
		}
		json.NewDecoder(resp.Body).Decode(&out)
		var srcs []string
		for _, r := range out.Results {
			srcs = append(srcs, r.Source)
		}
		return resp.StatusCode, srcs
	}
	if code, srcs := searchAs(created); code != http.StatusOK || len(srcs) == 0 || slices.ContainsFunc(srcs, func(s string) bool { return s != "fin" }) {
		t.Fatalf("search with the key made in the console: %d, sources %v", code, srcs)
	}
	prefix := eval[string](b, `[...document.querySelectorAll('table.keys tbody tr')].find(r => r.cells[0].textContent === 'fin-agent').cells[1].textContent`)
	b.click(`button.revoke[data-key="` + prefix + `"]`)
	b.wait(`//span[@class="question"][contains(., "Revoke fin-agent")]`)
	b.click("button.confirm")
	b.wait(`//div[@id="status"]/div[contains(., "Key fin-agent (` + prefix + `) revoked.")]`)
	if code, _ := searchAs(created); code != http.StatusUnauthorized {
		t.Errorf("search with the revoked key: %d, want 401", code)
	}
	b.shot("keys")
}

// TestConsoleRendersTheContracts shows the search page's explanations and the analytics
// page from the documented answers of POST /search with "explain" and of the
// /admin/analytics endpoints (testdata/contracts), served in front of a real server: the
// pages' rendering of every field is tested whichever of them the server answers itself.
// A search of anything but the weather meets a server that refuses "explain".
func TestConsoleRendersTheContracts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	t.Parallel()
	st := newStack(t, true)
	fixture := func(w http.ResponseWriter, name string) {
		body, err := os.ReadFile(filepath.Join("testdata", "contracts", name+".json"))
		if err != nil {
			http.NotFound(w, nil)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}
	var learningAsked []string // the tenant parameter of each learning request ("" absent)
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if name, ok := strings.CutPrefix(r.URL.Path, "/admin/analytics/"); ok {
			if name == "learning" {
				mu.Lock()
				learningAsked = append(learningAsked, r.URL.Query().Get("tenant"))
				mu.Unlock()
			}
			fixture(w, name)
			return
		}
		if r.Method == http.MethodPost && r.URL.Path == "/search" {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			switch {
			case !bytes.Contains(body, []byte(`"explain":true`)):
			case bytes.Contains(body, []byte("weather")):
				fixture(w, "search-explain")
				return
			default:
				// as a server without explanations refuses the field
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				io.WriteString(w, `{"error":{"code":"invalid_request","message":"body: json: unknown field \"explain\""}}`)
				return
			}
		}
		st.handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	b := newBrowser(t)

	b.open(srv.URL+"/ui/search?q=weather+in+Paris+tomorrow+and+email+it+to+Ana&plan=full", "#results li .explanation")
	if n := eval[int](b, `document.querySelectorAll('.explain-off').length`); n != 0 {
		t.Error(`"explanations unavailable" shown with explanations`)
	}
	terms := eval[[]string](b, `[...document.querySelectorAll('#results li:first-child .term')].map(e => e.textContent)`)
	if strings.Join(terms, "|") != "weather in name, description, questions|forecast in description" {
		t.Errorf("matched terms shown: %q", terms)
	}
	lines := eval[string](b, `document.querySelector('#results li:first-child .explanation').textContent`)
	for _, want := range []string{"fused 2.610", "= lexical 1.500 + vector 0.810 + meaning 0.300", "#1 · BM25 7.12", "similarity 0.714",
		"meaning share 0.300", "task 1: weather in Paris tomorrow"} {
		if !strings.Contains(lines, want) {
			t.Errorf("explanation %q lacks %q", lines, want)
		}
	}
	// the meaning branch's line, under the vector branch's
	if got := eval[[]string](b, `[...document.querySelectorAll('#results li:first-child .explanation .branch')].map(e => e.textContent)`); strings.Join(got, ",") != "lexical,vector,meaning,task" {
		t.Errorf("branch lines of the first result: %v", got)
	}
	if got := eval[string](b, `document.querySelector('#results li:nth-child(3) .explanation').textContent`); !strings.Contains(got, "lexical: not ranked") ||
		!strings.Contains(got, "vector not among the nearest · similarity 0.301") {
		t.Errorf("a result the lexical branch missed: %q", got)
	}
	if n := eval[int](b, `document.querySelectorAll('#results li:first-child .explanation rect.part').length`); n != 3 {
		t.Errorf("%d parts in the shares bar, want 3 (lexical, vector, meaning)", n)
	}
	// a result the meaning branch did not score shows nothing of it
	if n := eval[int](b, `document.querySelectorAll('#results li:nth-child(2) .explanation rect.part').length`); n != 2 {
		t.Errorf("%d parts in the second result's shares bar, want 2", n)
	}
	for _, i := range []int{2, 3} {
		if got := eval[string](b, fmt.Sprintf(`document.querySelector('#results li:nth-child(%d) .explanation').textContent`, i)); strings.Contains(got, "meaning") {
			t.Errorf("result %d, without a meaning share, shows one: %q", i, got)
		}
	}
	if got := eval[string](b, `[...document.querySelectorAll('section')].find(s => s.querySelector('h2')?.textContent === 'How the score was made')?.textContent || ''`); !strings.Contains(got, "meaning 0.3") || !strings.Contains(got, "τ 0.4") {
		t.Errorf("how the score was made: %q, want the meaning weight and the vector confidence", got)
	}
	b.wait(`//section[h2="Plan"]//li[contains(., "email it to Ana")]`)
	b.shot("search")

	// A server that refuses "explain": the page searches again without it and says so.
	b.open(srv.URL+"/ui/search?q=send+an+email", "#results li")
	if got := b.text(".explain-off"); !strings.HasPrefix(got, "Explanations unavailable") {
		t.Errorf("notice: %q", got)
	}
	if first := b.text("#results li .tool-name"); first != "acme__send_email" {
		t.Errorf("first result without explanations: %q", first)
	}
	if got := b.text("#results li:first-child .why"); !strings.Contains(got, "lexical #1") {
		t.Errorf("ranks shown without explanations: %q", got)
	}

	b.open(srv.URL+"/ui/analytics?days=7", "#an-searches figure")
	b.settled()
	for sel, want := range map[string]int{
		"#an-searches polyline": 5, "#an-latency polyline": 3, "#an-profiles polyline": 4, "#an-learning polyline": 4, "#an-zero tbody tr": 4, "#an-low tbody tr": 3,
		"#an-top tbody tr": 4, "#an-slowest tbody tr": 3, "#an-tools tbody tr": 7,
	} {
		if n := eval[int](b, `document.querySelectorAll('`+sel+`').length`); n != want {
			t.Errorf("%s: %d, want %d", sel, n, want)
		}
	}
	// the searches that returned tools with no good match, counted over the window
	if got := b.text("#an-searches-summary"); !strings.Contains(got, "375 of low confidence (6.9%) · 500 low-score") {
		t.Errorf("searches summary %q: want the low-confidence and low-score counts", got)
	}
	// the learning curve: the hit rates of the labelled searches, the memories, the searches helped
	if got := b.text("#an-learning-summary"); got != "151 memories stored · 1,115 labelled searches in this window" {
		t.Errorf("learning summary %q", got)
	}
	if got := eval[[]string](b, `[...document.querySelectorAll('#an-learning figure')].map(f => f.querySelectorAll('circle').length + ' ' + f.textContent.includes('%'))`); strings.Join(got, ",") != "14 true,7 false,7 true" {
		t.Errorf("learning charts (points, in percent): %q", got)
	}
	// a day without labels has no MRR: one point fewer on its line, none at zero
	if n := eval[int](b, `document.querySelectorAll('#an-profiles figure')[1].querySelectorAll('circle').length`); n != 13 {
		t.Errorf("%d MRR points, want 13 (7 days × 2 profiles, one day without labels)", n)
	}
	if got := eval[string](b, `document.querySelector('#an-zero tbody tr:nth-child(4) .query').textContent`); got != "<b>bold</b> query" {
		t.Errorf("a query with markup shown as %q", got)
	}
	// whose learning: every tenant's, or one of the tenants the answer lists
	if got := eval[[]string](b, `[...document.querySelectorAll('#an-learning-tenant option')].map(o => o.value + '=' + o.textContent)`); strings.Join(got, ",") != "=every tenant,(operator)=the operator,acme=acme,key:ci-bot=key:ci-bot" {
		t.Errorf("tenants offered: %q", got)
	}
	b.shot("analytics")
	b.do("show acme's learning", chromedp.SetValue(chromedp.CSS("#an-learning-tenant"), "acme"),
		chromedp.Click(chromedp.CSS("#an-learning-filter button")))
	b.wait("#an-learning figure")
	b.settled()
	if loc := b.location(); !strings.HasSuffix(loc, "/ui/analytics?days=7&tenant=acme") {
		t.Errorf("location %s, want the tenant in it", loc)
	}
	if got := eval[string](b, `[...document.querySelectorAll('.window a')].find(a => a.textContent === '30 days')?.getAttribute('href') || ''`); got != "/ui/analytics?days=30&tenant=acme" {
		t.Errorf("the 30-day window links to %q, want the tenant kept", got)
	}
	mu.Lock()
	asked := slices.Clone(learningAsked)
	mu.Unlock()
	if !slices.Equal(asked, []string{"", "acme"}) {
		t.Errorf("learning asked for tenants %q, want every tenant, then acme", asked)
	}
}
