package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
	"github.com/toolgate/toolgate/jobs"
)

// TestPostgresRestartWhileServing restarts a private PostgreSQL instance under a running
// API and River client (docs/faults.md): while it is down every search answers 503
// "unavailable" quickly, never 500; once it is back the same server and client answer
// searches and work jobs again, without a restart.
func TestPostgresRestartWhileServing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pg := pgtest.NewServer(t)
	url := pg.URL("toolgate")
	setup, err := postgres.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	err = postgres.MigrateUp(ctx, setup)
	setup.Close()
	if err != nil {
		t.Fatal(err)
	}
	pool, err := postgres.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	testfactory.Catalog(ctx, t, pool, "acme", []catalog.Tool{testfactory.Tool("get_stock_price", "Latest stock price of a ticker")}, nil)
	if _, err := db.New(pool).EnsureSearchLogPartitions(ctx, 2); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log, SearchLogKeep: 90 * 24 * time.Hour}, jobs.Options{Work: true, MaxWorkers: 2})
	if err != nil {
		t.Fatal(err)
	}
	completed, cancelSub := rc.Subscribe(river.EventKindJobCompleted)
	defer cancelSub()
	if err := rc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = rc.StopAndCancel(stopCtx)
	}()
	srv := httptest.NewServer(api.New(api.Deps{Pool: pool, River: rc, Logger: log, Open: true,
		Search: search.New(pool, nil, search.DefaultSettings(), log)}))
	defer srv.Close()

	type answer struct {
		status int
		code   string
	}
	searchOnce := func() answer {
		resp, err := http.Post(srv.URL+"/search", "application/json", strings.NewReader(`{"query":"stock price","k":3,"mode":"lexical"}`))
		if err != nil {
			t.Errorf("search: %v", err)
			return answer{}
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var e struct {
			Error struct{ Code string } `json:"error"`
		}
		_ = json.Unmarshal(body, &e)
		return answer{resp.StatusCode, e.Error.Code}
	}
	if a := searchOnce(); a.status != http.StatusOK {
		t.Fatalf("search before the restart: %+v", a)
	}

	// Searches keep running from four clients across the whole restart.
	var (
		mu      sync.Mutex
		answers []answer
		wg      sync.WaitGroup
	)
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				a := searchOnce()
				mu.Lock()
				answers = append(answers, a)
				mu.Unlock()
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	pg.Stop()
	var down []answer
	for range 5 {
		a := searchOnce()
		down = append(down, a)
	}
	pg.Start()

	// The same server recovers by itself.
	deadline := time.Now().Add(30 * time.Second)
	for a := searchOnce(); a.status != http.StatusOK; a = searchOnce() {
		if time.Now().After(deadline) {
			t.Fatalf("search still failing 30s after the restart: %+v", a)
		}
		time.Sleep(100 * time.Millisecond)
	}
	close(stop)
	wg.Wait()

	// Each of these answered before PostgreSQL was started again (they ran one after the
	// other between Stop and Start): a search does not wait for the database to come back.
	for _, a := range down {
		if a.status != http.StatusServiceUnavailable || a.code != "unavailable" {
			t.Errorf("search while PostgreSQL is down: %+v, want 503 unavailable", a)
		}
	}
	counts := map[int]int{}
	for _, a := range answers {
		counts[a.status]++
		if a.status != http.StatusOK && (a.status != http.StatusServiceUnavailable || a.code != "unavailable") {
			t.Errorf("search during the restart: %+v, want 200 or 503 unavailable", a)
		}
	}
	t.Logf("background searches across the restart by status: %v; down: %+v", counts, down)

	// The River client, never restarted, works a job inserted after the restart.
	var jobID int64
	deadline = time.Now().Add(30 * time.Second)
	for {
		res, err := rc.Insert(ctx, jobs.SearchLogMaintenanceArgs{}, &river.InsertOpts{UniqueOpts: river.UniqueOpts{}})
		if err == nil {
			jobID = res.Job.ID
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("insert a job after the restart: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev := <-completed:
			if ev.Job.ID == jobID {
				return
			}
		case <-timeout:
			t.Fatalf("job %d inserted after the restart was not worked within 30s", jobID)
		}
	}
}

// TestBackendKilledMidSearch kills the PostgreSQL backend of a search in flight with
// SIGKILL, what an out-of-memory kill does (docs/faults.md): the connection is lost in the
// middle of the query, an outage like the server going away, so the search answers 503
// "unavailable", not 500; once PostgreSQL has recovered, the same server searches again.
func TestBackendKilledMidSearch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pg := pgtest.NewServer(t)
	url := pg.URL("toolgate")
	pool, err := postgres.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := postgres.MigrateUp(ctx, pool); err != nil {
		t.Fatal(err)
	}
	testfactory.Catalog(ctx, t, pool, "acme", []catalog.Tool{testfactory.Tool("get_stock_price", "Latest stock price of a ticker")}, nil)
	if _, err := db.New(pool).EnsureSearchLogPartitions(ctx, 2); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	var logMu sync.Mutex
	log := slog.New(slog.NewTextHandler(lockedWriter{&logs, &logMu}, nil))
	srv := httptest.NewServer(api.New(api.Deps{Pool: pool, Logger: log, Open: true,
		Search: search.New(pool, nil, search.DefaultSettings(), log)}))
	defer srv.Close()
	searchOnce := func() (int, string) {
		resp, err := http.Post(srv.URL+"/search", "application/json", strings.NewReader(`{"query":"stock price","k":3,"mode":"lexical"}`))
		if err != nil {
			t.Errorf("search: %v", err)
			return 0, ""
		}
		defer resp.Body.Close()
		var e struct {
			Error struct{ Code string } `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return resp.StatusCode, e.Error.Code
	}
	if code, _ := searchOnce(); code != http.StatusOK {
		t.Fatalf("search before the kill: %d", code)
	}

	// The search waits on a lock of the tools table, so that its backend is in the middle
	// of its query when it is killed.
	locker, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = locker.Rollback(ctx) }()
	if _, err := locker.Exec(ctx, `LOCK TABLE tools IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		status int
		code   string
	}
	answers := make(chan answer, 1)
	go func() {
		code, e := searchOnce()
		answers <- answer{code, e}
	}()
	var pid int
	deadline := time.Now().Add(30 * time.Second)
	for {
		// outside the locker's transaction, which would see one snapshot of the activity
		err := pool.QueryRow(ctx, `SELECT pid FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&pid)
		if err == nil {
			break
		}
		if !errors.Is(err, pgx.ErrNoRows) || time.Now().After(deadline) {
			t.Fatalf("the search never waited on the lock: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if a := <-answers; a.status != http.StatusServiceUnavailable || a.code != "unavailable" {
		logMu.Lock()
		t.Errorf("search whose backend was killed: %+v, want 503 unavailable\n%s", a, logs.String())
		logMu.Unlock()
	}

	deadline = time.Now().Add(60 * time.Second)
	for code, _ := searchOnce(); code != http.StatusOK; code, _ = searchOnce() {
		if time.Now().After(deadline) {
			t.Fatalf("search still failing 60s after the kill: %d", code)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// lockedWriter serialises writes to a strings.Builder shared with the test.
type lockedWriter struct {
	b  *strings.Builder
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
