package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/pgtest"
)

// TestServeSearchesOnTheReadReplica runs `serve` with DATABASE_READ_URL naming a session
// that refuses every write (default_transaction_read_only, as a hot standby does): a search
// succeeds, so it ran the read-only statement there; its log row is on the primary; and
// /metrics watches the replica's pool. (internal/search tests the same against a real
// standby.)
func TestServeSearchesOnTheReadReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (a whole server, evaluation or concurrent run): the full suite, make test, runs it")
	}
	t.Parallel()
	primary := pgtest.NewDB(t)
	readOnly := primary + "&options=" + "-c%20default_transaction_read_only%3Don"
	addr := freeAddr(t)
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"DATABASE_URL": primary, "DATABASE_READ_URL": readOnly,
			"LISTEN_ADDR": addr, "TOOLGATE_OPEN": "true", "TOOLGATE_ROLE": "api"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	env := &cliEnv{cfg: cfg, log: newLogger(cfg, io.Discard), stdout: io.Discard, stderr: io.Discard}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, env, nil) }()
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve returned %v", err)
			}
		case <-time.After(40 * time.Second):
			t.Error("serve did not stop")
		}
	}()
	base := "http://" + addr
	waitReady(t, base)

	resp, err := http.Post(base+"/search", "application/json", strings.NewReader(`{"query":"stock price","session_id":"replica-test"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("search through the replica: %d %s", resp.StatusCode, body)
	}
	conn, err := pgx.Connect(context.Background(), primary)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var replica bool
	if err := conn.QueryRow(context.Background(), `SELECT (timings->>'replica')::bool FROM search_log
		WHERE session_id = 'replica-test'`).Scan(&replica); err != nil || !replica {
		t.Errorf("log row on the primary: replica=%v, %v", replica, err)
	}
	resp, err = http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(metrics), `toolgate_db_pool_max_conns{pool="replica"}`) {
		t.Error(`/metrics has no pool="replica" series`)
	}
}
