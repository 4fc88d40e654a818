package mcpclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/mcptest"
)

// textResult is a tools/call result whose one text content is n bytes long.
func textResult(n int) json.RawMessage {
	return json.RawMessage(`{"content":[{"type":"text","text":"` + strings.Repeat("a", n) + `"}]}`)
}

// An answer over MaxResponseBytes fails its call with a *ResponseTooLargeError, whether it
// comes as one JSON body (its length announced or not) or as server-sent events (one huge
// event, or many small ones); the session answers the next call.
func TestHTTPAnswerOverTheLimit(t *testing.T) {
	const limit = 1 << 20
	var mode atomic.Value
	srv := mcptest.NewRawHTTP(t, func(w http.ResponseWriter, r *http.Request, req mcptest.RawRequest) {
		var p struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(req.Params, &p)
		if p.Name == "small" {
			mcptest.WriteResult(w, req.ID, textResult(10))
			return
		}
		huge := `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":` + string(textResult(limit)) + `}`
		switch mode.Load() {
		case "json length":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(huge)))
			_, _ = w.Write([]byte(huge))
		case "json chunked":
			mcptest.WriteResult(w, req.ID, textResult(limit))
		case "one event":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", huge)
		case "many events":
			w.Header().Set("Content-Type", "text/event-stream")
			for i := range 40 {
				fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"%d %s\"}}\n\n",
					i, strings.Repeat("b", limit/32))
			}
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}\n\n", req.ID, textResult(10))
		}
	})
	ctx := context.Background()
	s, err := mcpclient.Connect(ctx, mcpclient.KindHTTP, srv.Config(), mcpclient.Options{NoRetries: true, Limits: mcpclient.Limits{MaxResponseBytes: limit}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, m := range []string{"json length", "json chunked", "one event", "many events"} {
		t.Run(m, func(t *testing.T) {
			mode.Store(m)
			cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			res, err := s.CallTool(cctx, &mcp.CallToolParams{Name: "huge"})
			var tooLarge *mcpclient.ResponseTooLargeError
			if !errors.As(err, &tooLarge) || tooLarge.Limit != limit {
				t.Fatalf("got %v, %v; want a *ResponseTooLargeError of %d bytes", res, err, limit)
			}
			if cctx.Err() != nil {
				t.Fatalf("the call ran out of time: %v", err)
			}
			res, err = s.CallTool(cctx, &mcp.CallToolParams{Name: "small"})
			if err != nil || res.IsError {
				t.Fatalf("the next call on the session: %v, %v", res, err)
			}
		})
	}
}

// A tools/list page over MaxResponseBytes fails the listing with a *ListTooLargeError,
// even under TOOLGATE_MAX_LIST_BYTES.
func TestHTTPListPageOverTheLimit(t *testing.T) {
	srv := mcptest.NewRawHTTP(t, func(w http.ResponseWriter, r *http.Request, req mcptest.RawRequest) {
		mcptest.WriteResult(w, req.ID, json.RawMessage(`{"tools":[{"name":"big","description":"`+strings.Repeat("d", 200<<10)+`","inputSchema":{"type":"object"}}]}`))
	})
	_, err := mcpclient.List(context.Background(), mcpclient.KindHTTP, srv.Config(), 20*time.Second,
		mcpclient.Options{Limits: mcpclient.Limits{MaxResponseBytes: 100 << 10}})
	var tooLarge *mcpclient.ListTooLargeError
	if !errors.As(err, &tooLarge) || !strings.Contains(err.Error(), "TOOLGATE_MCP_MAX_RESPONSE_BYTES") {
		t.Fatalf("got %v, want a *ListTooLargeError naming TOOLGATE_MCP_MAX_RESPONSE_BYTES", err)
	}
}

// An mcp_http server's redirect is never followed: the call fails with a *RedirectError, and
// the location it names gets nothing (not the source's headers, its URL's key in a Referer,
// nor the caller's arguments); so does a redirect of the first request.
func TestHTTPRefusesRedirects(t *testing.T) {
	var reached atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) }))
	defer target.Close()
	redirecting := mcptest.NewRawHTTP(t, func(w http.ResponseWriter, r *http.Request, req mcptest.RawRequest) {
		http.Redirect(w, r, target.URL+"/internal-admin/delete", http.StatusTemporaryRedirect)
	})
	cfg := mcpclient.Config{URL: redirecting.URL + "/mcp?api_key=k-secret", Headers: map[string]string{"Authorization": "Bearer s3cret", "X-Api-Key": "k2"}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := mcpclient.Connect(ctx, mcpclient.KindHTTP, cfg, mcpclient.Options{NoRetries: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.CallTool(ctx, &mcp.CallToolParams{Name: "delete", Arguments: map[string]any{"id": 1}})
	var redirect *mcpclient.RedirectError
	if !errors.As(err, &redirect) || redirect.Status != http.StatusTemporaryRedirect {
		t.Fatalf("got %v, want a *RedirectError of 307", err)
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("the redirect's location got %d requests", n)
	}

	// the first request redirected: initialize never reaches the location
	moved := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusPermanentRedirect)
	}))
	defer moved.Close()
	_, err = mcpclient.Connect(ctx, mcpclient.KindHTTP, mcpclient.Config{URL: moved.URL, Headers: cfg.Headers}, mcpclient.Options{NoRetries: true})
	if !errors.As(err, &redirect) || redirect.Status != http.StatusPermanentRedirect {
		t.Fatalf("connect: got %v, want a *RedirectError of 308", err)
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("the redirect's location got %d requests", n)
	}
}

// BenchmarkHugeAnswersInParallel calls, parallel times at once on one session, a tool whose
// server streams a 400 MiB JSON answer, under the default MaxResponseBytes (16 MiB): every
// call is refused. It reports the process's peak resident memory (VmHWM) and the heap's
// peak in use, in MiB (docs/auth.md#upstream-answers-in-memory).
func BenchmarkHugeAnswersInParallel(b *testing.B) {
	const answer = 400 << 20
	srv := mcptest.NewRawHTTP(b, func(w http.ResponseWriter, r *http.Request, req mcptest.RawRequest) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, req.ID)
		chunk := []byte(strings.Repeat("a", 1<<20))
		for range answer >> 20 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		fmt.Fprint(w, `"}]}}`)
	})
	ctx := context.Background()
	s, err := mcpclient.Connect(ctx, mcpclient.KindHTTP, srv.Config(), mcpclient.Options{NoRetries: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const parallel = 8
	var heapPeak atomic.Uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			if m.HeapInuse > heapPeak.Load() {
				heapPeak.Store(m.HeapInuse)
			}
		}
	}()
	for b.Loop() {
		var wg sync.WaitGroup
		for range parallel {
			wg.Go(func() {
				_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "read_file"})
				if !errors.As(err, new(*mcpclient.ResponseTooLargeError)) {
					b.Errorf("got %v, want a *ResponseTooLargeError", err)
				}
			})
		}
		wg.Wait()
	}
	close(done)
	<-sampled
	b.ReportMetric(float64(heapPeak.Load())/(1<<20), "heap-peak-MiB")
	b.ReportMetric(float64(vmHWM(b))/(1<<20), "rss-peak-MiB")
}

// vmHWM is the process's peak resident set size in bytes (0 where /proc is not there).
func vmHWM(b *testing.B) int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
