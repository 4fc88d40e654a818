package api_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

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
		took   time.Duration
	}
	searchOnce := func() answer {
		start := time.Now()
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
		return answer{resp.StatusCode, e.Error.Code, time.Since(start)}
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

	for _, a := range down {
		// generous bound: the connect timeout (postgres.DefaultConnectTimeout) is 5s
		if a.status != http.StatusServiceUnavailable || a.code != "unavailable" || a.took > 10*time.Second {
			t.Errorf("search while PostgreSQL is down: %+v, want a quick 503 unavailable", a)
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
