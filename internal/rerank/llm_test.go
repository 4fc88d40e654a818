package rerank

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/llm"
	"github.com/toolgate/toolgate/internal/provider"
)

// completion is an OpenAI chat completion answering content.
func completion(content string) string {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion",
		"choices": []map[string]any{{"index": 0, "message": map[string]string{"role": "assistant", "content": content}, "finish_reason": "stop"}},
		"usage":   map[string]int{"prompt_tokens": 300, "completion_tokens": 40},
	})
	return string(b)
}

func newLLM(t *testing.T, p *fakeAPI) *LLM {
	return NewLLM(llm.New(llm.Config{Provider: provider.Config{BaseURL: serve(t, p) + "/v1"}, Model: "gpt-test"}))
}

func TestLLMRerank(t *testing.T) {
	p := &fakeAPI{body: completion(`{"scores":[{"index":0,"score":0.3},{"index":1,"score":0.0},{"index":2,"score":0.9},{"index":3,"score":0.6}]}`)}
	res, err := newLLM(t, p).Rerank(context.Background(), "Ford revenue and price", docs, 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Result{{2, 0.9}, {3, 0.6}, {0, 0.3}}; !slices.Equal(res, want) {
		t.Errorf("results %v, want %v", res, want)
	}
	req := p.last()
	msgs, _ := req["messages"].([]any)
	rf, _ := req["response_format"].(map[string]any)
	if p.path != "/v1/chat/completions" || len(msgs) != 2 || rf["type"] != "json_object" {
		t.Fatalf("request %s %v", p.path, req)
	}
	system, _ := msgs[0].(map[string]any)["content"].(string)
	user, _ := msgs[1].(map[string]any)["content"].(string)
	if !strings.Contains(system, `"scores"`) || !strings.Contains(user, "Ford revenue and price") ||
		!strings.Contains(user, "[0] "+docs[0].Text) || !strings.Contains(user, "[3] "+docs[3].Text) {
		t.Errorf("prompt\nsystem %q\nuser %q", system, user)
	}
}

func TestLLMRerankMalformed(t *testing.T) {
	for _, content := range []string{
		`the best tool is get_ford_revenue`,
		`{"ranking":[2,3]}`,
		`{"scores":[]}`,
		`{"scores":[{"index":0,"score":1.5}]}`,
		`{"scores":[{"index":0,"score":-0.1}]}`,
		`{"scores":[{"index":4,"score":0.5}]}`,
		`{"scores":[{"index":1,"score":0.5},{"index":1,"score":0.4}]}`,
		`{"scores":[{"index":1}]}`,
		`{"scores":[{"index":"1","score":0.5}]}`,
	} {
		_, err := newLLM(t, &fakeAPI{body: completion(content)}).Rerank(context.Background(), "q", docs, 2)
		if !isMalformed(err) {
			t.Errorf("%s: err = %v", content, err)
		}
	}
}

// TestApplyLLM: through Apply, the LLM's partial scores come first and the fused order
// fills the rest; a provider error or a timeout keeps the fused ranking.
func TestApplyLLM(t *testing.T) {
	r := newLLM(t, &fakeAPI{body: completion("```json\n{\"scores\":[{\"index\":3,\"score\":0.8}]}\n```")})
	got, d := Apply(context.Background(), r, "q", docs, 2, time.Second)
	if !slices.Equal(names(got), []string{"get_ford_current_stock_price", "get_apple_revenue"}) || !d.Applied || d.Reranker != KindLLM {
		t.Errorf("ranking %v decision %+v", names(got), d)
	}
	for _, c := range []struct {
		want    string
		p       *fakeAPI
		timeout time.Duration
	}{
		{"provider error: status 500", &fakeAPI{status: 500, body: `{"error":{"message":"x"}}`}, 10 * time.Second},
		{"timeout after 100ms", &fakeAPI{block: true}, 100 * time.Millisecond},
	} {
		got, d := Apply(context.Background(), newLLM(t, c.p), "q", docs, 2, c.timeout)
		if !slices.Equal(names(got), names(docs[:2])) || d.Applied || d.Fallback != c.want {
			t.Errorf("%s: ranking %v decision %+v", c.want, names(got), d)
		}
	}
}
