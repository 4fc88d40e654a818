package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
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

	waitReady(t, "http://"+addr)

	// A request whose body arrives slowly is in flight when the shutdown starts. It asks
	// for 100 Continue, which the server sends when the handler starts reading the body: the
	// client sends the body only then, so once the first part of it is taken the handler is
	// certainly running.
	pr, pw := io.Pipe()
	reading := make(chan struct{})
	trace := &httptrace.ClientTrace{Got100Continue: func() { close(reading) }}
	client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: time.Minute}}
	answered := make(chan int, 1)
	go func() {
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "POST", "http://"+addr+"/search", pr)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Expect", "100-continue")
		resp, err := client.Do(req)
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	select {
	case <-reading:
	case <-time.After(30 * time.Second):
		t.Fatal("the handler never read the request's body")
	}
	pw.Write([]byte(`{"query":"stock`))
	cancel()
	// The rest of the body is sent once the shutdown has begun: the port refuses new
	// connections (the first thing Shutdown does), while the request is still unanswered.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("the port still accepts connections 30 s after the cancel")
		}
	}
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
