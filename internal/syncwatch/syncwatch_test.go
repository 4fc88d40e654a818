package syncwatch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/mcptest"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/syncwatch"
	"github.com/toolgate/toolgate/jobs"
)

func TestMain(m *testing.M) {
	mcptest.RunIfChild()
	os.Exit(m.Run())
}

// waitFor polls cond until it holds; the test's own timeout bounds it.
func waitFor(cond func() bool) {
	for !cond() {
		time.Sleep(20 * time.Millisecond)
	}
}

func TestListChangedQueuesSync(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tools := []catalog.Tool{{Name: "a", Description: "A.", InputSchema: json.RawMessage(`{"type":"object"}`)}}
	srv := mcptest.NewHTTP(t, tools, mcptest.Normal, 0)
	cfg, _ := json.Marshal(srv.Config())
	src, err := db.New(pool).CreateSource(ctx, db.CreateSourceParams{Name: "web", Kind: "mcp_http", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	jobsOf := func() int {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'sync_source' AND (args->>'source_id')::bigint = $1`, src.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	w := syncwatch.New(pool, jobs.NewQueue(rc), log, 10*time.Second, mcptest.Commands(), mcpclient.Limits{})
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { w.Run(wctx); close(done) }()
	waitFor(func() bool { return syncwatch.Connected(w, src.ID) })
	if n := jobsOf(); n != 0 {
		t.Fatalf("%d sync jobs before any change", n)
	}

	srv.Set(append(tools, catalog.Tool{Name: "b", Description: "B.", InputSchema: json.RawMessage(`{"type":"object"}`)}))
	waitFor(func() bool { return jobsOf() > 0 })

	stop()
	<-done
	if syncwatch.Connected(w, src.ID) {
		t.Fatal("still connected after shutdown")
	}
}

// syncJobs counts the sync jobs queued for a source.
func syncJobs(t *testing.T, pool *pgxpool.Pool, sourceID int64) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM river_job WHERE kind = 'sync_source' AND (args->>'source_id')::bigint = $1`, sourceID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A stdio source is watched through one long-lived server process: its list_changed queues
// a sync; the process is restarted when it dies and when the source's config changes, and
// stopped when the source is deleted and when the watcher stops.
func TestListChangedQueuesSyncOverStdio(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tools := []catalog.Tool{{Name: "a", Description: "A.", InputSchema: json.RawMessage(`{"type":"object"}`)}}
	srv := mcptest.NewStdio(t, tools, mcptest.Normal, 0)
	cfg, _ := json.Marshal(srv.Config())
	q := db.New(pool)
	src, err := q.CreateSource(ctx, db.CreateSourceParams{Name: "local", Kind: "mcp_stdio", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	// servers are the stdio server processes running now: this test runs alone in its
	// package's process (no t.Parallel), so every child of the test binary is one.
	servers := func() []int { return mcptest.Descendants(os.Getpid()) }

	w := syncwatch.New(pool, jobs.NewQueue(rc), log, 10*time.Second, mcpclient.NewCommandPolicyOf(mcpclient.AllowedCommand{
		Words: []string{os.Args[0]}, Env: append([]string{"WATCH_TEST_GENERATION"}, mcptest.EnvNames...)}), mcpclient.Limits{})
	syncwatch.SetRescan(w, 100*time.Millisecond)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { w.Run(wctx); close(done) }()
	waitFor(func() bool { return syncwatch.Connected(w, src.ID) })
	first := servers()
	if len(first) != 1 || syncJobs(t, pool, src.ID) != 0 {
		t.Fatalf("watching: server processes %v, %d sync jobs; want one process and no job", first, syncJobs(t, pool, src.ID))
	}

	srv.Set(append(tools, catalog.Tool{Name: "b", Description: "B.", InputSchema: json.RawMessage(`{"type":"object"}`)}))
	waitFor(func() bool { return syncJobs(t, pool, src.ID) > 0 })

	// The server dies: it is started again.
	p, err := os.FindProcess(first[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(func() bool {
		now := servers()
		return len(now) == 1 && now[0] != first[0] && syncwatch.Connected(w, src.ID)
	})
	second := servers()

	// The source's config changes: the old server is stopped, one with the new config runs.
	changed := srv.Config()
	changed.Env["WATCH_TEST_GENERATION"] = "2"
	cfg, _ = json.Marshal(changed)
	if _, err := q.UpdateSourceSettings(ctx, db.UpdateSourceSettingsParams{ID: src.ID, Config: cfg, SyncInterval: src.SyncInterval}); err != nil {
		t.Fatal(err)
	}
	waitFor(func() bool {
		now := servers()
		return len(now) == 1 && !slices.Contains(now, second[0]) && syncwatch.Connected(w, src.ID)
	})

	// The source is deleted: its server is stopped.
	if _, err := q.DeleteSource(ctx, src.Name); err != nil {
		t.Fatal(err)
	}
	waitFor(func() bool { return !syncwatch.Connected(w, src.ID) && len(servers()) == 0 })

	// A new source's server is stopped with the watcher.
	other, err := q.CreateSource(ctx, db.CreateSourceParams{Name: "other", Kind: "mcp_stdio", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(func() bool { return syncwatch.Connected(w, other.ID) })
	stop()
	<-done
	if syncwatch.Connected(w, other.ID) || len(servers()) != 0 {
		t.Fatalf("after shutdown: connected %v, server processes %v", syncwatch.Connected(w, other.ID), servers())
	}
}

// padServer is a Streamable HTTP MCP server, written by hand, whose standalone stream sends
// one notifications/tools/list_changed padded to pad bytes, then stays open; streams counts
// the standalone streams opened.
func padServer(t *testing.T, pad int, streams *atomic.Int32) mcpclient.Config {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			streams.Add(1)
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\",\"params\":{\"_meta\":{\"pad\":%q}}}\n\n",
				strings.Repeat("x", pad))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		var req mcptest.RawRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		result := json.RawMessage(`{}`)
		if req.Method == "initialize" {
			result = json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"pad","version":"1"}}`)
		}
		mcptest.WriteResult(w, req.ID, result)
	}))
	t.Cleanup(ts.Close)
	return mcpclient.Config{URL: ts.URL}
}

// The watcher's sessions are bounded by the limits it is given, the events of the
// standalone stream included: a list_changed notification of 256 KiB under a bound of
// 64 KiB is refused (the session ends and is opened again) and queues no sync. Before, the
// stream had the default bound of 16 MiB whatever TOOLGATE_MCP_MAX_RESPONSE_BYTES said, and
// the notification queued a sync.
func TestStandaloneStreamHasTheConfiguredBound(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var streams atomic.Int32
	cfg, _ := json.Marshal(padServer(t, 256<<10, &streams))
	src, err := db.New(pool).CreateSource(ctx, db.CreateSourceParams{Name: "web", Kind: "mcp_http", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	w := syncwatch.New(pool, jobs.NewQueue(rc), log, 10*time.Second, mcptest.Commands(), mcpclient.Limits{MaxResponseBytes: 64 << 10})
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { w.Run(wctx); close(done) }()
	// Either the notification was read (a sync is queued) or it was refused, which ends
	// the session: the watcher opens another, with its own stream.
	waitFor(func() bool { return syncJobs(t, pool, src.ID) > 0 || streams.Load() >= 2 })
	stop()
	<-done
	if n := syncJobs(t, pool, src.ID); n != 0 {
		t.Fatalf("%d sync jobs queued by a notification over the bound", n)
	}
}
