package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/llm"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/provider"
)

// fakeOpenAI speaks the OpenAI chat completions and embeddings wire format and counts calls.
type fakeOpenAI struct {
	chatCalls, embedCalls atomic.Int64
	mu                    sync.Mutex
	// status codes to answer with before answering normally (per endpoint path)
	failures map[string][]int
	// judge answers, in order; true once exhausted
	judge         []bool
	profileAnswer string // raw content for profile generation; a valid profile when empty
	local         *embed.Local
}

func newFake(t testing.TB) (*fakeOpenAI, *httptest.Server) {
	f := &fakeOpenAI{failures: map[string][]int{}, local: embed.NewLocal(64)}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeOpenAI) nextFailure(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fs := f.failures[path]; len(fs) > 0 {
		f.failures[path] = fs[1:]
		return fs[0]
	}
	return 0
}

func (f *fakeOpenAI) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Header.Get("Authorization") != "Bearer sk-test" {
		http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
		return
	}
	switch r.URL.Path {
	case "/v1/chat/completions":
		f.chatCalls.Add(1)
	case "/v1/embeddings":
		f.embedCalls.Add(1)
	default:
		http.NotFound(w, r)
		return
	}
	if code := f.nextFailure(r.URL.Path); code != 0 {
		if code == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "0")
		}
		w.WriteHeader(code)
		_, _ = w.Write([]byte(`{"error":{"message":"try later","type":"server_error"}}`))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path == "/v1/embeddings" {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		_ = json.Unmarshal(body, &req)
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		data := make([]item, len(req.Input))
		for i, s := range req.Input {
			data[i] = item{"embedding", i, f.local.Vector(s)}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model,
			"usage": map[string]int{"prompt_tokens": 7 * len(req.Input), "total_tokens": 7 * len(req.Input)}})
		return
	}
	var req struct {
		Messages []llm.Message `json:"messages"`
		Format   struct {
			Type string `json:"type"`
		} `json:"response_format"`
	}
	_ = json.Unmarshal(body, &req)
	if req.Format.Type != "json_object" {
		http.Error(w, `{"error":{"message":"want json mode"}}`, http.StatusBadRequest)
		return
	}
	sys := req.Messages[0].Content
	var content string
	switch {
	case strings.Contains(sys, "judge whether the tool_profile"):
		ok := true
		f.mu.Lock()
		if len(f.judge) > 0 {
			ok, f.judge = f.judge[0], f.judge[1:]
		}
		f.mu.Unlock()
		content = `{"consistent": ` + map[bool]string{true: "true", false: "false"}[ok] + `}`
	case strings.Contains(sys, `"tool_profile"`):
		content = f.profileAnswer
		if content == "" {
			content = `{"tool_profile": {"function": "Returns the latest stock price of a company.", "tags": ["stock", "price", "quote"], "when_to_use": "When asked for a current share price.", "limitation": "Returns -1 when unavailable.", "example_usage": [{"query": "apple stock price", "api_call": "get_price()"}]}}`
		}
	case strings.Contains(sys, "requests that real users"):
		content = `{"questions": ["What is Apple trading at?", "apple share price now", "How much is one AAPL share?"]}`
	case strings.Contains(sys, "key topics"):
		content = `{"topics": ["stock price", "market quote"]}`
	}
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-test",
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
			"message": map[string]string{"role": "assistant", "content": content}}},
		"usage": map[string]int{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
	})
}

func openAIDeps(pool *pgxpool.Pool, srv *httptest.Server, judge bool, retries int) Deps {
	pc := provider.Config{BaseURL: srv.URL + "/v1", Key: "sk-test", Timeout: 5 * time.Second, Concurrency: 4,
		Retries: retries, BaseBackoff: time.Millisecond}
	return Deps{
		Pool:      pool,
		Logger:    slog.New(slog.DiscardHandler),
		Embedder:  embed.NewOpenAI(embed.OpenAIConfig{Provider: pc, Model: "text-embedding-test", Dims: 64, MaxBatch: 8}),
		Enricher:  enrich.NewLLM(llm.New(llm.Config{Provider: pc, Model: "gpt-test"}), judge),
		Questions: 3,
	}
}

func insertClient(t testing.TB, pool *pgxpool.Pool) *river.Client[pgx.Tx] {
	t.Helper()
	rc, err := NewClient(Deps{Pool: pool, Logger: slog.New(slog.DiscardHandler)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

// importOne imports one demo tool and returns its id and hash.
func importOne(t *testing.T, pool *pgxpool.Pool) (int64, string) {
	t.Helper()
	tools := dataset.Tools(dataset.DemoCompanies[:1])[:1]
	_, res, err := ImportCatalog(context.Background(), pool, insertClient(t, pool), "fin", tools)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changed) != 1 {
		t.Fatalf("changed %v", res.Changed)
	}
	tool, err := db.New(pool).GetToolByID(context.Background(), res.Changed[0])
	if err != nil {
		t.Fatal(err)
	}
	return tool.ID, tool.ContentHash
}

func countRows(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestEnrichToolOpenAIIdempotent(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	f, srv := newFake(t)
	deps := openAIDeps(pool, srv, true, 2)
	id, hash := importOne(t, pool)

	// importing enqueued exactly one enrich_tool job for the tool's hash
	if n := countRows(t, pool, `SELECT count(*) FROM river_job WHERE kind = 'enrich_tool' AND args->>'content_hash' = $1`, hash); n != 1 {
		t.Fatalf("%d enrich_tool jobs queued", n)
	}
	// queuing the same definition again adds a job (not unique: see InsertOpts), which the
	// second run below shows costs no provider call
	params, err := EnrichJobsFor(ctx, db.New(pool), []int64{id})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := insertClient(t, pool).InsertMany(ctx, params); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM river_job WHERE kind = 'enrich_tool'`); n != 2 {
		t.Fatalf("%d enrich_tool jobs after a second enqueue, want 2", n)
	}
	rep, err := EnrichTool(ctx, deps, EnrichToolArgs{ToolID: id, ContentHash: hash})
	if err != nil {
		t.Fatal(err)
	}
	// profile + judge + questions + topics; components embedded in batches of 8
	if got := f.chatCalls.Load(); got != 4 {
		t.Fatalf("chat calls %d, want 4", got)
	}
	if rep.Usage.PromptTokens != 400 || rep.Usage.CompletionTokens != 80 {
		t.Fatalf("usage %+v", rep.Usage)
	}
	if n := countRows(t, pool, `SELECT prompt_tokens FROM tool_enrichments WHERE tool_id = $1 AND step = 'profile'`, id); n != 200 {
		t.Fatalf("profile step prompt tokens %d, want 200 (generation + judgement)", n)
	}
	// name, description, 3 questions, topics, 5 profile fields, concat (no parameters)
	if n := countRows(t, pool, `SELECT count(*) FROM tool_components WHERE tool_id = $1 AND embedding IS NOT NULL AND model = 'openai:text-embedding-test'`, id); n != 12 {
		t.Fatalf("%d embedded components, want 12", n)
	}
	if rep.Embedded != 12 || f.embedCalls.Load() != 2 {
		t.Fatalf("embedded %d in %d calls", rep.Embedded, f.embedCalls.Load())
	}
	// one vector per built-in profile
	if n := countRows(t, pool, `SELECT count(*) FROM tool_vectors WHERE tool_id = $1`, id); n != 5 {
		t.Fatalf("%d tool vectors, want 5", n)
	}
	if n := countRows(t, pool, `SELECT vector_dims(embedding) FROM tool_vectors WHERE tool_id = $1 LIMIT 1`, id); n != 64 {
		t.Fatalf("vector dims %d", n)
	}

	// second run and an unchanged re-import: no provider call at all
	chat, emb := f.chatCalls.Load(), f.embedCalls.Load()
	rep, err = EnrichTool(ctx, deps, EnrichToolArgs{ToolID: id, ContentHash: hash})
	if err != nil {
		t.Fatal(err)
	}
	if f.chatCalls.Load() != chat || f.embedCalls.Load() != emb || rep.Embedded != 0 || len(rep.Steps) != 0 {
		t.Fatalf("second run made calls: chat %d→%d embed %d→%d, report %+v", chat, f.chatCalls.Load(), emb, f.embedCalls.Load(), rep)
	}
	_, res, err := ImportCatalog(ctx, pool, insertClient(t, pool), "fin", dataset.Tools(dataset.DemoCompanies[:1])[:1])
	if err != nil || len(res.Changed) != 0 {
		t.Fatalf("re-import: %v %+v", err, res)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM river_job WHERE kind = 'enrich_tool'`); n != 2 {
		t.Fatalf("unchanged re-import queued jobs: %d", n-2)
	}

	// a stale job (superseded hash) does nothing
	rep, err = EnrichTool(ctx, deps, EnrichToolArgs{ToolID: id, ContentHash: "old"})
	if err != nil || rep.Skipped != "superseded" {
		t.Fatalf("stale job: %+v %v", rep, err)
	}
}

func TestEnrichToolRetriesRateLimit(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	f, srv := newFake(t)
	f.failures["/v1/chat/completions"] = []int{429, 429}
	f.failures["/v1/embeddings"] = []int{503}
	deps := openAIDeps(pool, srv, false, 3)
	id, hash := importOne(t, pool)
	if _, err := EnrichTool(context.Background(), deps, EnrichToolArgs{ToolID: id, ContentHash: hash}); err != nil {
		t.Fatal(err)
	}
	if got := f.chatCalls.Load(); got != 5 {
		t.Fatalf("chat calls %d, want 3 + 2 retries", got)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM tool_components WHERE tool_id = $1`, id); n != 12 {
		t.Fatalf("%d components", n)
	}
}

func TestEnrichToolProviderDownWritesNothing(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	f, srv := newFake(t)
	// the chat steps succeed, the embeddings endpoint fails every attempt
	f.failures["/v1/embeddings"] = []int{500, 500, 500, 500, 500, 500}
	deps := openAIDeps(pool, srv, false, 2)
	// one batch, so that the attempts are countable (a failed batch cancels its siblings)
	deps.Embedder = embed.NewOpenAI(embed.OpenAIConfig{Provider: provider.Config{BaseURL: srv.URL + "/v1", Key: "sk-test",
		Retries: 2, BaseBackoff: time.Millisecond}, Model: "text-embedding-test", Dims: 64, MaxBatch: 64})
	id, hash := importOne(t, pool)
	_, err := EnrichTool(context.Background(), deps, EnrichToolArgs{ToolID: id, ContentHash: hash})
	var pe *provider.ProviderError
	if !errors.As(err, &pe) || pe.Status != 500 {
		t.Fatalf("want a 500 ProviderError, got %v", err)
	}
	if got := f.embedCalls.Load(); got != 3 {
		t.Fatalf("embedding calls %d, want 1 + 2 retries", got)
	}
	for _, table := range []string{"tool_components", "tool_enrichments", "tool_vectors"} {
		if n := countRows(t, pool, `SELECT count(*) FROM `+table+` WHERE tool_id = $1`, id); n != 0 {
			t.Fatalf("%d rows in %s after a failed job", n, table)
		}
	}

	// The worker returns the error, so River retries the job.
	f.mu.Lock()
	f.failures["/v1/embeddings"] = []int{500, 500, 500, 500, 500, 500}
	f.mu.Unlock()
	w := &EnrichToolWorker{deps: deps}
	if err := w.Work(context.Background(), &river.Job[EnrichToolArgs]{Args: EnrichToolArgs{ToolID: id, ContentHash: hash}}); err == nil {
		t.Fatal("worker swallowed the provider error")
	}
	// once the provider is back, the retry succeeds
	f.mu.Lock()
	f.failures["/v1/embeddings"] = nil
	f.mu.Unlock()
	if err := w.Work(context.Background(), &river.Job[EnrichToolArgs]{Args: EnrichToolArgs{ToolID: id, ContentHash: hash}}); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM tool_vectors WHERE tool_id = $1`, id); n != 5 {
		t.Fatalf("%d vectors after the retry", n)
	}
}

func TestEnrichToolMalformedJSON(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	for _, answer := range []string{
		`{"tool_profile": {"function": "x", "tags": ["a"`,                                              // truncated
		`{"tool_profile": {"tags": ["stock", "price", "quote"]}}`,                                      // no function
		`{"tool_profile": {"function": "Stock price.", "tags": ["stock"]}}`,                            // too few tags
		`{"profile": {"function": "Stock price.", "tags": ["a", "b", "c"]}}`,                           // wrong key
		`Sure! Here is the profile: {"tool_profile": {}}`,                                              // prose
		`{"tool_profile": {"function": "` + strings.Repeat("word ", 60) + `", "tags": ["a","b","c"]}}`, // too long
	} {
		f, srv := newFake(t)
		f.profileAnswer = answer
		deps := openAIDeps(pool, srv, false, 0)
		id, hash := importOneNamed(t, pool)
		_, err := EnrichTool(ctx, deps, EnrichToolArgs{ToolID: id, ContentHash: hash})
		var me *enrich.MalformedOutputError
		if !errors.As(err, &me) || me.Step != enrich.StepProfile {
			t.Fatalf("%s: want MalformedOutputError, got %v", answer, err)
		}
		if n := countRows(t, pool, `SELECT count(*) FROM tool_enrichments WHERE tool_id = $1`, id) +
			countRows(t, pool, `SELECT count(*) FROM tool_components WHERE tool_id = $1`, id); n != 0 {
			t.Fatalf("%s: rows stored", answer)
		}
	}
}

var toolSeq atomic.Int64

// importOneNamed imports a fresh single-tool source.
func importOneNamed(t *testing.T, pool *pgxpool.Pool) (int64, string) {
	t.Helper()
	// a number, not a growing run of letters: -count=10 makes hundreds of sources, and a
	// source name has at most 32 characters
	name := fmt.Sprintf("src%d", toolSeq.Add(1))
	tools := []catalog.Tool{{Name: "get_price", Description: "Returns the latest stock price."}}
	_, res, err := ImportCatalog(context.Background(), pool, insertClient(t, pool), name, tools)
	if err != nil {
		t.Fatal(err)
	}
	var hash string
	if err := pool.QueryRow(context.Background(), `SELECT content_hash FROM tools WHERE id = $1`, res.Changed[0]).Scan(&hash); err != nil {
		t.Fatal(err)
	}
	return res.Changed[0], hash
}

func TestEnrichToolJudgeFailKeepsOriginal(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	f, srv := newFake(t)
	f.judge = []bool{false, false}
	deps := openAIDeps(pool, srv, true, 0)
	id, hash := importOne(t, pool)
	if _, err := EnrichTool(context.Background(), deps, EnrichToolArgs{ToolID: id, ContentHash: hash}); err != nil {
		t.Fatal(err)
	}
	// generate, judge, regenerate, judge; then questions and topics
	if got := f.chatCalls.Load(); got != 6 {
		t.Fatalf("chat calls %d, want 6", got)
	}
	var out string
	if err := pool.QueryRow(context.Background(), `SELECT output::text FROM tool_enrichments WHERE tool_id = $1 AND step = 'profile'`, id).Scan(&out); err != nil {
		t.Fatal(err)
	}
	if out != `{"tool_profile": null}` {
		t.Fatalf("profile output %s", out)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM tool_components WHERE tool_id = $1 AND kind LIKE 'profile_%'`, id); n != 0 {
		t.Fatalf("%d profile components kept after a failed judgement", n)
	}

	// judged consistent on the regeneration: the second profile is kept
	pool2 := pgtest.NewPool(t)
	f2, srv2 := newFake(t)
	f2.judge = []bool{false, true}
	id2, hash2 := importOne(t, pool2)
	if _, err := EnrichTool(context.Background(), openAIDeps(pool2, srv2, true, 0), EnrichToolArgs{ToolID: id2, ContentHash: hash2}); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, pool2, `SELECT count(*) FROM tool_components WHERE tool_id = $1 AND kind LIKE 'profile_%'`, id2); n != 5 {
		t.Fatalf("%d profile components, want 5", n)
	}
}

// TestEnrichToolProviderHangs points enrichment at an OpenAI-compatible server that accepts
// requests and never answers (docs/faults.md): every attempt ends at the provider timeout
// (TOOLGATE_LLM_TIMEOUT), the job fails with a timeout error River retries, and nothing of
// the tool's enrichment is written.
func TestEnrichToolProviderHangs(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	release := make(chan struct{})
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	pc := provider.Config{BaseURL: srv.URL + "/v1", Key: "sk-test", Timeout: 200 * time.Millisecond, Concurrency: 4,
		Retries: 1, BaseBackoff: time.Millisecond}
	deps := Deps{Pool: pool, Logger: slog.New(slog.DiscardHandler), Questions: 3,
		Embedder: embed.NewOpenAI(embed.OpenAIConfig{Provider: pc, Model: "text-embedding-test", Dims: 64, MaxBatch: 8}),
		Enricher: enrich.NewLLM(llm.New(llm.Config{Provider: pc, Model: "gpt-test"}), false)}
	id, hash := importOne(t, pool)
	w := &EnrichToolWorker{deps: deps}
	start := time.Now()
	err := w.Work(context.Background(), &river.Job[EnrichToolArgs]{Args: EnrichToolArgs{ToolID: id, ContentHash: hash}})
	took := time.Since(start)
	var pe *provider.ProviderError
	if !errors.As(err, &pe) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want a provider timeout error for River to retry, got %v", err)
	}
	// generous bound: two attempts of 200ms each, far below the minutes of a hang
	if took > 10*time.Second {
		t.Errorf("hanging provider held the job for %s", took)
	}
	if calls.Load() < 2 {
		t.Errorf("%d provider calls, want the first attempt and its retry", calls.Load())
	}
	for _, table := range []string{"tool_components", "tool_enrichments", "tool_vectors"} {
		if n := countRows(t, pool, `SELECT count(*) FROM `+table+` WHERE tool_id = $1`, id); n != 0 {
			t.Fatalf("%d rows in %s after a timed-out job", n, table)
		}
	}
}

// TestEnrichToolFencedJSON: a profile wrapped in a Markdown fence, however the fence is
// tagged, is read like the bare JSON.
func TestEnrichToolFencedJSON(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	profile := `{"tool_profile": {"function": "Returns the latest price of a stock.", "tags": ["stock", "price", "quote"]}}`
	for _, answer := range []string{"```json\n" + profile + "\n```", "```JSON\n" + profile + "\n```", "```\n" + profile + "\n```"} {
		f, srv := newFake(t)
		f.profileAnswer = answer
		id, hash := importOneNamed(t, pool)
		if _, err := EnrichTool(ctx, openAIDeps(pool, srv, false, 0), EnrichToolArgs{ToolID: id, ContentHash: hash}); err != nil {
			t.Fatalf("%q: %v", answer, err)
		}
		if n := countRows(t, pool, `SELECT count(*) FROM tool_components WHERE tool_id = $1 AND kind = 'profile_function'`, id); n != 1 {
			t.Errorf("%q: %d profile_function components, want 1", answer, n)
		}
	}
}
