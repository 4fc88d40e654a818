package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/pgtest"
)

// TestServeLetsRunningJobsFinish: when serve is stopped (SIGTERM cancels its context) while
// an enrichment job is waiting on a slow provider, the job is not cancelled: it finishes
// within the shutdown timeout and is recorded completed.
func TestServeLetsRunningJobsFinish(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 1)
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Input []string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		select {
		case started <- struct{}{}:
		default:
		}
		time.Sleep(time.Second) // slow, but well within the shutdown timeout
		data := []map[string]any{}
		for i := range req.Input {
			data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": []float32{1, 0, 0, 0, 0, 0, 0, 1}})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": "fake-embed"})
	}))
	defer fake.Close()
	addr := freeAddr(t)
	dbURL := pgtest.NewDB(t)
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"DATABASE_URL": dbURL, "LISTEN_ADDR": addr, "TOOLGATE_OPEN": "true",
			"TOOLGATE_EMBEDDER": "openai", "TOOLGATE_EMBED_URL": fake.URL + "/v1", "TOOLGATE_EMBED_DIMS": "8",
			"TOOLGATE_EMBED_MODEL": "fake-embed", "TOOLGATE_SHUTDOWN_TIMEOUT": "20s"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	env := &cliEnv{cfg: cfg, log: newLogger(cfg, io.Discard), stdout: io.Discard, stderr: io.Discard}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, env, nil) }()
	base := "http://" + addr
	waitReady(t, base)
	req, _ := http.NewRequest(http.MethodPut, base+"/v1/sources/market/tools",
		strings.NewReader(`{"name":"get_price","description":"Latest stock price of a company"}`))
	req.Header.Set("Content-Type", "application/x-ndjson")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("import: %d", resp.StatusCode)
	}
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the enrichment job never called the provider")
	}
	cancel() // what SIGTERM does
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v", err)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("serve did not stop")
	}
	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var state string
	if err := conn.QueryRow(context.Background(), `SELECT state FROM river_job WHERE kind = 'enrich_tool'`).Scan(&state); err != nil || state != "completed" {
		t.Errorf("the enrichment job running at shutdown is %q (%v), want completed", state, err)
	}
}
