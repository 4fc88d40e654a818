package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/pgtest"
)

// TestServeShutsDownOnCancel starts `serve` (API and workers) on a fresh database, waits until
// it is ready, holds a request in flight, cancels the context as SIGTERM would, and checks that
// the in-flight request is answered, serve returns cleanly and the port is released.
func TestServeShutsDownOnCancel(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)

	cfg, err := config.Load(func(k string) string {
		switch k {
		case "DATABASE_URL":
			return pgtest.NewDB(t)
		case "LISTEN_ADDR":
			return addr
		case "TOOLGATE_OPEN":
			return "true"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	env := &cliEnv{cfg: cfg, log: newLogger(cfg, io.Discard), stdout: io.Discard, stderr: io.Discard}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, env, nil) }()

	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve never became ready: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// A request whose body arrives slowly is in flight when the shutdown starts.
	pr, pw := io.Pipe()
	answered := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("POST", "http://"+addr+"/search", pr)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	pw.Write([]byte(`{"query":"stock`))
	time.Sleep(200 * time.Millisecond)
	cancel()
	time.Sleep(200 * time.Millisecond)
	pw.Write([]byte(` price"}`))
	pw.Close()

	if code := <-answered; code != http.StatusOK {
		t.Fatalf("in-flight request got %d during shutdown, want 200", code)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v", err)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("serve did not stop")
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatal("port still accepting connections after shutdown")
	}
}
