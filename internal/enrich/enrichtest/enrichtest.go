// Package enrichtest is a fake OpenAI-compatible provider for the tests and benchmarks of
// enrichment: an httptest server that speaks the real wire format.
package enrichtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/llm"
)

// Provider speaks the OpenAI chat completions and embeddings wire format, answers the
// enrichment prompts of enrich.NewLLM and counts calls. Its key is Key; its embeddings are
// the local embedder's, 64 dimensions.
type Provider struct {
	ChatCalls, EmbedCalls atomic.Int64

	mu sync.Mutex
	// status codes to answer with before answering normally (per endpoint path)
	failures map[string][]int
	// judge answers, in order; true once exhausted
	judge         []bool
	profileAnswer string // raw content for profile generation; a valid profile when empty
	questions     string // raw content for question generation; three questions when empty
	local         *embed.Local
}

// Key is the API key the fake accepts.
const Key = "sk-test"

// New starts a fake provider; its base URL is the server's URL + "/v1".
func New(t testing.TB) (*Provider, *httptest.Server) {
	f := &Provider{failures: map[string][]int{}, local: embed.NewLocal(64)}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	return f, srv
}

// Fail makes the next requests to path ("/v1/chat/completions", "/v1/embeddings") answer
// with the given status codes, in order, before it answers normally again.
func (f *Provider) Fail(path string, codes ...int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures[path] = append(f.failures[path], codes...)
}

// Judge sets the faithfulness judge's next answers, in order; it says true once they are
// used up.
func (f *Provider) Judge(answers ...bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.judge = answers
}

// ProfileAnswer sets the raw content answered to profile generation; empty answers a
// valid profile.
func (f *Provider) ProfileAnswer(content string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.profileAnswer = content
}

// QuestionsAnswer sets the raw content answered to question generation; empty answers
// three good questions.
func (f *Provider) QuestionsAnswer(content string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.questions = content
}

// Recover drops the failures still to be answered on path.
func (f *Provider) Recover(path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.failures, path)
}

func (f *Provider) nextFailure(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fs := f.failures[path]; len(fs) > 0 {
		f.failures[path] = fs[1:]
		return fs[0]
	}
	return 0
}

func (f *Provider) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Header.Get("Authorization") != "Bearer "+Key {
		http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
		return
	}
	switch r.URL.Path {
	case "/v1/chat/completions":
		f.ChatCalls.Add(1)
	case "/v1/embeddings":
		f.EmbedCalls.Add(1)
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
		f.mu.Lock()
		content = f.profileAnswer
		f.mu.Unlock()
		if content == "" {
			content = `{"tool_profile": {"function": "Returns the latest stock price of a company.", "tags": ["stock", "price", "quote"], "when_to_use": "When asked for a current share price.", "limitation": "Returns -1 when unavailable.", "example_usage": [{"query": "apple stock price", "api_call": "get_price()"}]}}`
		}
	case strings.Contains(sys, "requests that real users"):
		f.mu.Lock()
		content = f.questions
		f.mu.Unlock()
		if content == "" {
			content = `{"questions": ["What is Apple trading at?", "apple share price now", "How much is one AAPL share?"]}`
		}
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
