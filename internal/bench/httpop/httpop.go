// Package httpop holds the benchmarks' HTTP side: a handler served on a loopback listener,
// the keep-alive client of the benchmark workers, and the measured requests.
package httpop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/bench"
)

// Toolgate serves toolgate's API on the catalog of pool (as the command wires it) and
// returns its base URL and the function stopping it.
type Toolgate func(pool *pgxpool.Pool) (base string, stop func(), err error)

// Serve serves h on a loopback listener and returns its base URL and the function stopping
// it.
func Serve(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// Client is the keep-alive HTTP client of clients concurrent benchmark workers.
func Client(clients int) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConns: clients, MaxIdleConnsPerHost: clients}}
}

// PostSearch posts {"query": q, "k": 10} plus the extra fields to base/search with hc per
// operation, cycling through queries; any status but 200 is an error.
func PostSearch(hc *http.Client, base string, queries []string, extra map[string]any) bench.Op {
	bodies := make([][]byte, len(queries))
	for i, q := range queries {
		body := map[string]any{"query": q, "k": 10}
		for k, v := range extra {
			body[k] = v
		}
		bodies[i], _ = json.Marshal(body)
	}
	var mu sync.Mutex
	next := 0
	return func(ctx context.Context, _ int) error {
		mu.Lock()
		body := bodies[next%len(bodies)]
		next++
		mu.Unlock()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/search", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		return Do(hc, req, "POST /search")
	}
}

// Get GETs url with hc per operation; any status but 200 is an error.
func Get(hc *http.Client, url string) bench.Op {
	return func(ctx context.Context, _ int) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		return Do(hc, req, "GET")
	}
}

// Do sends req with hc and reads the whole answer; any status but 200 is an error naming
// what.
func Do(hc *http.Client, req *http.Request, what string) error {
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %d %s", what, resp.StatusCode, bytes.TrimSpace(data))
	}
	return nil
}
