package syncwatch_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/mcptest"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/syncwatch"
	"github.com/toolgate/toolgate/jobs"
)

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

	w := syncwatch.New(pool, rc, log, 10*time.Second)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { w.Run(wctx); close(done) }()
	waitFor(func() bool { return w.Connected(src.ID) })
	if n := jobsOf(); n != 0 {
		t.Fatalf("%d sync jobs before any change", n)
	}

	srv.Set(append(tools, catalog.Tool{Name: "b", Description: "B.", InputSchema: json.RawMessage(`{"type":"object"}`)}))
	waitFor(func() bool { return jobsOf() > 0 })

	stop()
	<-done
	if w.Connected(src.ID) {
		t.Fatal("still connected after shutdown")
	}
}
