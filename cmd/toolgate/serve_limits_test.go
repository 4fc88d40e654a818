package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/pgtest"
)

// TestServeHasLimits: `serve` serves with the limits of its settings: a client trickling
// its headers past TOOLGATE_HTTP_READ_HEADER_TIMEOUT is disconnected, a body over
// TOOLGATE_MAX_BODY_BYTES is 413, and a normal request is answered.
func TestServeHasLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (a whole server, evaluation or concurrent run): the full suite, make test, runs it")
	}
	t.Parallel()
	addr := freeAddr(t)
	cfg, err := config.Load(func(k string) string {
		return map[string]string{
			"DATABASE_URL":                      pgtest.NewDB(t),
			"LISTEN_ADDR":                       addr,
			"TOOLGATE_OPEN":                     "true",
			"TOOLGATE_ROLE":                     "api",
			"TOOLGATE_HTTP_READ_HEADER_TIMEOUT": "300ms",
			"TOOLGATE_HTTP_READ_TIMEOUT":        "1s",
			"TOOLGATE_MAX_BODY_BYTES":           "1024",
		}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	env := &cliEnv{cfg: cfg, log: newLogger(cfg, io.Discard), stdout: io.Discard, stderr: io.Discard}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, env, nil) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	waitReady(t, "http://"+addr)

	// Headers trickled in, one line every 100 ms: the connection is closed, not held.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stop := make(chan struct{})
	defer close(stop)
	io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n")
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := io.WriteString(conn, "X-Slow: 1\r\n"); err != nil {
					return
				}
			}
		}
	}()
	conn.SetReadDeadline(time.Now().Add(15 * time.Second)) // a generous bound: 50 times the limit
	if _, err := io.ReadAll(conn); os.IsTimeout(err) {
		t.Fatal("a client trickling its headers is still connected")
	}

	post := func(body string) (int, string) {
		resp, err := http.Post("http://"+addr+"/v1/sources", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Error struct{ Code string } `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out.Error.Code
	}
	// POST /v1/sources takes a catalog: the JSON limit does not apply to it, but does to keys.
	if code, _ := post(`{"name":"acme","kind":"catalog","tools":[{"name":"t","description":"` + strings.Repeat("d", 2000) + `"}]}`); code != http.StatusCreated {
		t.Fatalf("create a source of 2 KB: %d", code)
	}
	resp, err := http.Post("http://"+addr+"/admin/keys", "application/json", strings.NewReader(`{"name":"`+strings.Repeat("k", 2000)+`","scope":"search"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("a 2 KB key request: %d, want 413", resp.StatusCode)
	}
}
