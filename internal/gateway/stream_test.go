package gateway_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/gateway"
)

// TestStandaloneStreamOutlivesWriteTimeout: a healthy standalone stream (GET /mcp) lives
// past the HTTP server's WriteTimeout, and list_changed still reaches the client on it.
func TestStandaloneStreamOutlivesWriteTimeout(t *testing.T) {
	t.Parallel()
	e := setup(t, gateway.Options{StreamKeepAlive: 50 * time.Millisecond})
	ts := httptest.NewUnstartedServer(e.g.HTTPHandler())
	ts.Config.WriteTimeout = 300 * time.Millisecond
	ts.Start()
	t.Cleanup(ts.Close)
	c := connectHTTP(t, ts.URL)
	// The time past the WriteTimeout is the thing under test: the stream must outlive it.
	time.Sleep(time.Second)
	find(t, c, "stock price", 1)
	waitChanged(t, c)
}

// smallBuffers makes the sockets it accepts buffer little, so that a client that stops
// reading blocks the server's writes after a few of them.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(1024)
	}
	return c, err
}

// TestStreamOfAClientThatStopsReadingIsClosed: a standalone stream whose client stopped
// reading is closed by the server within a bounded time (the keep-alives fill the socket,
// a write misses its deadline), instead of being held forever.
func TestStreamOfAClientThatStopsReadingIsClosed(t *testing.T) {
	t.Parallel()
	e := setup(t, gateway.Options{StreamKeepAlive: 2 * time.Millisecond, StreamWriteTimeout: 200 * time.Millisecond})
	ts := httptest.NewUnstartedServer(e.g.HTTPHandler())
	ts.Listener = smallBuffers{ts.Listener}
	ts.Start()
	t.Cleanup(ts.Close)

	post := func(session, body string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.Header.Get("Mcp-Session-Id")
	}
	id := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	post(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(1024)
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-06-18\r\n\r\n", ts.Listener.Addr(), id)
	br := bufio.NewReader(conn)
	status, err := br.ReadString('\n')
	if err != nil || !strings.Contains(status, "200") {
		t.Fatalf("GET: %q %v", status, err)
	}
	// The client stops reading; the server must give up on it. Not reading for a while is
	// the thing under test (the keep-alives fill the socket, a write misses its deadline).
	time.Sleep(3 * time.Second)
	_ = conn.SetReadDeadline(time.Now().Add(15 * time.Second))
	if _, err := io.Copy(io.Discard, br); err != nil {
		t.Fatalf("the stream of a client that stopped reading is still open: %v", err)
	}
}
