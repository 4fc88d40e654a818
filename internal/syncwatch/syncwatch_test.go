package syncwatch_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"slices"
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

	w := syncwatch.New(pool, jobs.NewQueue(rc), log, 10*time.Second, mcptest.Commands())
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
		Words: []string{os.Args[0]}, Env: append([]string{"WATCH_TEST_GENERATION"}, mcptest.EnvNames...)}))
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
