package plan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/llm"
	"github.com/toolgate/toolgate/internal/provider"
)

// chatRequest is the OpenAI /v1/chat/completions request body as sent.
type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format"`
}

// fakeLLM is an OpenAI-compatible chat provider answering content (or status, when not
// 200) and recording the requests it got.
type fakeLLM struct {
	mu        sync.Mutex
	requests  []chatRequest
	status    int
	content   string
	block     bool // wait until the client gives up
	noChoices bool
}

func (f *fakeLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	body, _ := io.ReadAll(r.Body)
	if r.URL.Path != "/v1/chat/completions" || json.Unmarshal(body, &req) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.mu.Unlock()
	if f.block {
		<-r.Context().Done()
		return
	}
	if f.status != 0 && f.status != http.StatusOK {
		http.Error(w, `{"error":{"message":"boom"}}`, f.status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if f.noChoices {
		io.WriteString(w, `{"id": "chatcmpl-1", "object": "chat.completion", "choices": []}`)
		return
	}
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion",
		"choices": []map[string]any{{"index": 0, "message": map[string]string{"role": "assistant", "content": f.content}, "finish_reason": "stop"}},
		"usage":   map[string]int{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
	})
}

func (f *fakeLLM) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

func newLLMPlanner(t *testing.T, f *fakeLLM, timeout time.Duration) *LLM {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c := llm.New(llm.Config{Provider: provider.Config{BaseURL: srv.URL + "/v1", Key: "sk-test"}, Model: "gpt-test"})
	return NewLLM(c, NewHeuristic(demoAliases()), timeout)
}

func TestLLMPlanFull(t *testing.T) {
	f := &fakeLLM{content: `{"rewritten": "revenue of Apple and Ford in 2021",
		"intents": [
			{"query": "Apple revenue 2021", "variants": ["Apple annual sales 2021", "Apple income statement top line", "Apple revenue 2021", "", "x", "y"]},
			{"query": "Ford revenue 2021", "variants": []}
		], "notes": "extra fields are ignored"}`}
	l := newLLMPlanner(t, f, 5*time.Second)
	q := "rev of AAPL and F in 2021"
	p, err := l.Plan(context.Background(), q, ModeFull)
	if err != nil {
		t.Fatal(err)
	}
	want := Plan{Mode: ModeFull, Original: q, Rewritten: "revenue of Apple and Ford in 2021", Planner: NameLLM, Intents: []Intent{
		{Query: "Apple revenue 2021", Variants: []string{"Apple annual sales 2021", "Apple income statement top line", "x"}},
		{Query: "Ford revenue 2021"},
	}}
	if !equalPlan(p, want) {
		t.Errorf("plan %+v\nwant %+v", p, want)
	}
	if len(f.requests) != 1 {
		t.Fatalf("%d requests", len(f.requests))
	}
	req := f.requests[0]
	if req.Model != "gpt-test" || req.ResponseFormat == nil || req.ResponseFormat.Type != "json_object" {
		t.Errorf("request model %q, response_format %+v", req.Model, req.ResponseFormat)
	}
	if len(req.Messages) != 2 || req.Messages[0].Role != "system" || req.Messages[1].Role != "user" {
		t.Fatalf("messages %+v", req.Messages)
	}
	if !strings.Contains(req.Messages[1].Content, q) {
		t.Errorf("user message %q lacks the query", req.Messages[1].Content)
	}
	for _, step := range []string{"Rewrite:", "Decompose:", "Expand:", `"variants"`} {
		if !strings.Contains(req.Messages[0].Content, step) {
			t.Errorf("full-mode system prompt lacks %q", step)
		}
	}
}

func TestLLMPlanModes(t *testing.T) {
	q := "rev of AAPL and F"
	cases := []struct {
		mode    Mode
		content string
		prompt  string // a phrase of the system prompt of this mode
		want    []Intent
		rw      string
	}{
		{ModeRewrite, `{"rewritten": "revenue of Apple and Ford"}`, "Rewrite the query",
			[]Intent{{Query: "revenue of Apple and Ford", Variants: []string{q}}}, "revenue of Apple and Ford"},
		// Decompose keeps the sub-queries only: variants are not asked for and dropped.
		{ModeDecompose, "```json\n{\"intents\": [{\"query\": \"rev of AAPL\", \"variants\": [\"v\"]}, {\"query\": \"rev of F\"}]}\n```", "Break the query down",
			[]Intent{{Query: "rev of AAPL"}, {Query: "rev of F"}}, q},
	}
	for _, c := range cases {
		f := &fakeLLM{content: c.content}
		p, err := newLLMPlanner(t, f, 5*time.Second).Plan(context.Background(), q, c.mode)
		if err != nil {
			t.Fatal(err)
		}
		if want := (Plan{Mode: c.mode, Original: q, Rewritten: c.rw, Planner: NameLLM, Intents: c.want}); !equalPlan(p, want) {
			t.Errorf("%s: plan %+v\nwant %+v", c.mode, p, want)
		}
		if len(f.requests) != 1 || !strings.Contains(f.requests[0].Messages[0].Content, c.prompt) {
			t.Errorf("%s: system prompt is not the %s prompt", c.mode, c.mode)
		}
	}
}

// TestLLMPlanNone: mode none asks nothing of the model.
func TestLLMPlanNone(t *testing.T) {
	f := &fakeLLM{content: `{}`}
	p, err := newLLMPlanner(t, f, time.Second).Plan(context.Background(), " AAPL rev ", ModeNone)
	if err != nil || len(f.requests) != 0 {
		t.Fatalf("err %v, %d requests", err, len(f.requests))
	}
	if len(p.Intents) != 1 || p.Intents[0].Query != "AAPL rev" || p.Fallback != "" {
		t.Errorf("plan %+v", p)
	}
}

func TestLLMPlanFallback(t *testing.T) {
	tooMany := `{"rewritten": "x", "intents": [` + strings.Repeat(`{"query": "q"},`, MaxIntents) + `{"query": "q"}]}`
	cases := []struct {
		name     string
		f        *fakeLLM
		fallback string
	}{
		{"not json", &fakeLLM{content: "Sure! Here is the plan: Apple, Ford"}, "malformed plan: not a JSON plan"},
		{"wrong types", &fakeLLM{content: `{"rewritten": 3, "intents": "Apple"}`}, "malformed plan: not a JSON plan"},
		{"no rewritten", &fakeLLM{content: `{"intents": [{"query": "a"}]}`}, `malformed plan: no "rewritten" field`},
		{"empty rewritten", &fakeLLM{content: `{"rewritten": "  ", "intents": [{"query": "a"}]}`}, "malformed plan: rewritten is empty"},
		{"no intents", &fakeLLM{content: `{"rewritten": "a", "intents": []}`}, "malformed plan: 0 intents, want 1 to 10"},
		{"too many intents", &fakeLLM{content: tooMany}, "malformed plan: 11 intents, want 1 to 10"},
		{"intent without query", &fakeLLM{content: `{"rewritten": "a", "intents": [{"query": "a"}, {"variants": ["b"]}]}`}, `malformed plan: intent 1 has no "query"`},
		{"empty intent", &fakeLLM{content: `{"rewritten": "a", "intents": [{"query": ""}]}`}, "malformed plan: intent 0 is empty"},
		{"huge intent", &fakeLLM{content: fmt.Sprintf(`{"rewritten": "a", "intents": [{"query": %q}]}`, strings.Repeat("a", 1001))}, "malformed plan: intent 0 is longer than 1000 bytes"},
		// PostgreSQL text holds no NUL: the search statement would fail on such a plan
		{"NUL in rewritten", &fakeLLM{content: `{"rewritten": "revenue\u0000", "intents": [{"query": "a"}]}`}, "malformed plan: rewritten contains a NUL character"},
		{"NUL in intent", &fakeLLM{content: `{"rewritten": "a", "intents": [{"query": "Apple\u0000 revenue"}]}`}, "malformed plan: intent 0 contains a NUL character"},
		{"status 500", &fakeLLM{status: http.StatusInternalServerError}, "provider error: status 500"},
		{"status 429", &fakeLLM{status: http.StatusTooManyRequests}, "provider error: rate limited"},
		{"status 400", &fakeLLM{status: http.StatusBadRequest}, "provider error: status 400"},
		{"no choices", &fakeLLM{noChoices: true}, "provider error: bad response: no choices"},
		{"timeout", &fakeLLM{block: true}, "timeout after 100ms"},
	}
	q := "revenue of AAPL and F"
	heuristic := NewHeuristic(demoAliases()).plan(q, ModeFull)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Only the blocking provider meets the short bound; the others answer well within 10s
			// even on a loaded machine.
			timeout := 10 * time.Second
			if c.f.block {
				timeout = 100 * time.Millisecond
			}
			p, err := newLLMPlanner(t, c.f, timeout).Plan(context.Background(), q, ModeFull)
			if err != nil {
				t.Fatal(err)
			}
			if p.Planner != NameHeuristic || !strings.HasPrefix(p.Fallback, c.fallback) {
				t.Errorf("planner %q fallback %q, want heuristic and %q", p.Planner, p.Fallback, c.fallback)
			}
			want := heuristic
			want.Fallback = p.Fallback
			if !equalPlan(p, want) {
				t.Errorf("fallback plan %+v\nwant the heuristic plan %+v", p, want)
			}
			// A blocked request may be given up before the handler records it.
			if n := c.f.count(); n != 1 && !c.f.block {
				t.Errorf("%d requests", n)
			}
		})
	}
}

// TestLLMPlanCallerGone: when the caller's context ends, Plan reports it instead of
// planning.
func TestLLMPlanCallerGone(t *testing.T) {
	l := newLLMPlanner(t, &fakeLLM{block: true}, time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Plan(ctx, "a and b", ModeFull); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func equalPlan(a, b Plan) bool {
	return a.Mode == b.Mode && a.Original == b.Original && a.Rewritten == b.Rewritten && a.Planner == b.Planner &&
		a.Fallback == b.Fallback && slices.EqualFunc(a.Intents, b.Intents, func(x, y Intent) bool {
		return x.Query == y.Query && slices.Equal(x.Variants, y.Variants)
	})
}
