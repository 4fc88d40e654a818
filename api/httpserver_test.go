package api_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/pgtest"
)

// Short limits, and the generous bound within which a connection over one must be closed:
// the assertions are that the server closes it, never how fast.
var (
	testServerLimits = api.ServerLimits{ReadHeaderTimeout: 300 * time.Millisecond, ReadTimeout: 600 * time.Millisecond,
		IdleTimeout: 600 * time.Millisecond, MaxHeaderBytes: 4 << 10}
	closedWithin = 15 * time.Second
)

// serveLimited serves h with api.NewHTTPServer on a real TCP port and returns its address.
func serveLimited(t *testing.T, h http.Handler) string {
	t.Helper()
	return serveLimitedWith(t, h, testServerLimits)
}

// serveLimitedWith serves h with api.NewHTTPServer and limits on a real TCP port.
func serveLimitedWith(t *testing.T, h http.Handler, limits api.ServerLimits) string {
	t.Helper()
	srv := api.NewHTTPServer(h, limits, slog.New(slog.DiscardHandler))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// trickle writes chunk to conn every 100 ms until stop is closed or a write fails.
func trickle(conn net.Conn, chunk string, stop <-chan struct{}) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if _, err := io.WriteString(conn, chunk); err != nil {
				return
			}
		}
	}
}

// waitClosed reads conn until the server closes it and returns what it read; it fails the
// test when the connection is still open after closedWithin.
func waitClosed(t *testing.T, conn net.Conn) string {
	t.Helper()
	if err := conn.SetReadDeadline(time.Now().Add(closedWithin)); err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := conn.Read(buf)
		got.Write(buf[:n])
		if err == nil {
			continue
		}
		if os.IsTimeout(err) || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("connection still open after %s (read so far %q)", closedWithin, got.String())
		}
		return got.String() // EOF, or a reset: closed by the server
	}
}

// TestServerCutsSlowClients: the served http.Server closes a connection whose headers
// trickle in past ReadHeaderTimeout, one whose body trickles in past ReadTimeout (the
// handler never gets the whole body) and one left idle past IdleTimeout; it refuses
// headers over MaxHeaderBytes; a normal request is served, and a response that takes
// longer than ReadTimeout (as the MCP event stream does) is not cut.
func TestServerCutsSlowClients(t *testing.T) {
	t.Parallel()
	var wholeBodies atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("POST /echo", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "read: "+err.Error(), http.StatusBadRequest)
			return
		}
		wholeBodies.Add(1)
		w.Write(body)
	})
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(3 * testServerLimits.ReadTimeout):
		case <-r.Context().Done():
			http.Error(w, "cancelled", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "done")
	})
	addr := serveLimited(t, mux)
	dial := func() net.Conn {
		t.Helper()
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}

	t.Run("normal request", func(t *testing.T) {
		resp, err := http.Post("http://"+addr+"/echo", "text/plain", strings.NewReader("hello"))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if b, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 || string(b) != "hello" {
			t.Fatalf("got %d %q", resp.StatusCode, b)
		}
	})
	t.Run("response longer than ReadTimeout", func(t *testing.T) {
		resp, err := http.Get("http://" + addr + "/slow")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if b, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 || string(b) != "done" {
			t.Fatalf("got %d %q, want the whole response", resp.StatusCode, b)
		}
	})
	t.Run("trickled headers", func(t *testing.T) {
		conn := dial()
		stop := make(chan struct{})
		defer close(stop)
		io.WriteString(conn, "GET /slow HTTP/1.1\r\nHost: x\r\n")
		go trickle(conn, "X-Slow: 1\r\n", stop)
		if got := waitClosed(t, conn); strings.Contains(got, "done") {
			t.Fatalf("the request was served: %q", got)
		}
	})
	t.Run("trickled body", func(t *testing.T) {
		conn := dial()
		stop := make(chan struct{})
		defer close(stop)
		io.WriteString(conn, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\n")
		go trickle(conn, "x", stop)
		waitClosed(t, conn)
		if n := wholeBodies.Load(); n != 1 { // the normal request's only
			t.Fatalf("the handler read %d whole bodies, want 1", n)
		}
	})
	t.Run("idle connection", func(t *testing.T) {
		conn := dial()
		io.WriteString(conn, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi")
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		waitClosed(t, conn)
	})
	t.Run("headers over MaxHeaderBytes", func(t *testing.T) {
		req, _ := http.NewRequest("GET", "http://"+addr+"/slow", nil)
		req.Header.Set("X-Big", strings.Repeat("x", 8*testServerLimits.MaxHeaderBytes))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("got %d, want 431", resp.StatusCode)
		}
	})
}

// TestTrickledBodyIsATimeoutNotAFailure: the API answers a JSON body that does not arrive
// within ReadTimeout with 408 request_timeout — the client's doing, not a 500 — on each
// route that reads a body whole (JSON and catalog bodies).
func TestTrickledBodyIsATimeoutNotAFailure(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	h := api.New(api.Deps{Pool: pool, Logger: slog.New(slog.DiscardHandler), Open: true})
	addr := serveLimited(t, h)
	for _, tc := range []struct{ method, path, ctype string }{
		{"POST", "/v1/sources", "application/json"},
		{"PUT", "/v1/sources/slow/tools", "application/x-ndjson"},
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: %s\r\nContent-Length: 10000\r\n\r\n{", tc.method, tc.path, tc.ctype)
		stop := make(chan struct{})
		go trickle(conn, " ", stop)
		got := waitClosed(t, conn)
		close(stop)
		conn.Close()
		if !strings.HasPrefix(got, "HTTP/1.1 408") || !strings.Contains(got, `"code":"request_timeout"`) {
			t.Errorf("%s %s with a trickled body: %q, want 408 request_timeout", tc.method, tc.path, got)
		}
	}
}
