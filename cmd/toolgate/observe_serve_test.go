package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/pgtest"
)

// TestServeRecordsProviderCalls runs `serve` with an OpenAI-compatible embedder (a fake
// speaking the real wire format), searches, and reads the provider metrics back from
// GET /metrics: every embeddings request the fake answered is one recorded call.
func TestServeRecordsProviderCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (a whole server, evaluation or concurrent run): the full suite, make test, runs it")
	}
	t.Parallel()
	var requests atomic.Int64
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		requests.Add(1)
		var req struct{ Input []string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		data := []map[string]any{}
		for i := range req.Input {
			data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": []float32{1, 0, 0, 0, 0, 0, 0, 1}})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": "fake-embed",
			"usage": map[string]int{"prompt_tokens": 5, "total_tokens": 5}})
	}))
	defer fake.Close()

	addr := freeAddr(t)
	cfg, err := config.Load(func(k string) string {
		return map[string]string{
			"DATABASE_URL": pgtest.NewDB(t), "LISTEN_ADDR": addr, "TOOLGATE_OPEN": "true",
			"TOOLGATE_EMBEDDER": "openai", "TOOLGATE_EMBED_URL": fake.URL + "/v1", "TOOLGATE_EMBED_DIMS": "8",
			"TOOLGATE_EMBED_MODEL": "fake-embed",
		}[k]
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

	resp, err := http.Post(base+"/search", "application/json", strings.NewReader(`{"query":"stock price of a company"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("search: %d %s", resp.StatusCode, body)
	}
	resp, err = http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	n := requests.Load()
	if n == 0 {
		t.Fatal("the search never called the embeddings API")
	}
	host := strings.TrimPrefix(fake.URL, "http://")
	for _, want := range []string{
		fmt.Sprintf(`toolgate_provider_calls_total{operation="embed",provider="%s"} %d`, host, n),
		fmt.Sprintf(`toolgate_provider_tokens_total{operation="embed",provider="%s"} %d`, host, 5*n),
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if t.Failed() {
		for _, l := range strings.Split(string(body), "\n") {
			if strings.HasPrefix(l, "toolgate_provider_") && !strings.Contains(l, "_bucket") {
				t.Log(l)
			}
		}
	}
}
