package rerank

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
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

var docs = []Doc{
	{ID: "get_apple_revenue", Text: "get_apple_revenue: annual revenue of Apple", Score: 0.9},
	{ID: "get_apple_net_income", Text: "get_apple_net_income: net income of Apple", Score: 0.8},
	{ID: "get_ford_revenue", Text: "get_ford_revenue: annual revenue of Ford", Score: 0.7},
	{ID: "get_ford_current_stock_price", Text: "get_ford_current_stock_price: share price of Ford", Score: 0.6},
}

// fakeAPI is a fake rerank or chat provider: it records each request body and answers status
// and body, or blocks until the client gives up.
type fakeAPI struct {
	mu     sync.Mutex
	bodies []map[string]any
	path   string
	auth   string
	status int
	body   string
	block  bool
}

func (p *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var m map[string]any
	json.Unmarshal(raw, &m)
	p.mu.Lock()
	p.bodies = append(p.bodies, m)
	p.path, p.auth = r.URL.Path, r.Header.Get("Authorization")
	p.mu.Unlock()
	if p.block {
		<-r.Context().Done()
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(cmp.Or(p.status, http.StatusOK))
	io.WriteString(w, p.body)
}

func (p *fakeAPI) last() map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.bodies) == 0 {
		return nil
	}
	return p.bodies[len(p.bodies)-1]
}

func serve(t *testing.T, p *fakeAPI) string {
	t.Helper()
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return srv.URL
}

func newHTTP(t *testing.T, p *fakeAPI, style Style) *HTTP {
	t.Helper()
	h, err := NewHTTP(serve(t, p)+"/v2/rerank", "rk-1", "rerank-v3.5", style, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestHTTPCohereAndJina(t *testing.T) {
	bodies := map[Style]string{
		StyleCohere: `{"id":"x","results":[{"index":2,"relevance_score":0.2},{"index":0,"relevance_score":0.95},{"index":3,"relevance_score":0.5}],"meta":{"billed_units":{"search_units":1}}}`,
		StyleJina:   `{"model":"jina-reranker-v2","usage":{"total_tokens":50},"results":[{"index":2,"relevance_score":0.2,"document":{"text":"x"}},{"index":0,"relevance_score":0.95,"document":{"text":"y"}},{"index":3,"relevance_score":0.5,"document":{"text":"z"}}]}`,
	}
	for style, body := range bodies {
		p := &fakeAPI{body: body}
		res, err := newHTTP(t, p, style).Rerank(context.Background(), "apple revenue", docs, 2)
		if err != nil {
			t.Fatal(err)
		}
		if want := []Result{{0, 0.95}, {3, 0.5}}; !slices.Equal(res, want) {
			t.Errorf("%s: results %v, want %v", style, res, want)
		}
		got := p.last()
		ds, _ := got["documents"].([]any)
		if p.path != "/v2/rerank" || p.auth != "Bearer rk-1" || got["model"] != "rerank-v3.5" || got["query"] != "apple revenue" ||
			got["top_n"] != float64(2) || len(ds) != 4 || ds[0] != docs[0].Text {
			t.Errorf("%s: request %s %q %v", style, p.path, p.auth, got)
		}
	}
}

func TestHTTPTEI(t *testing.T) {
	p := &fakeAPI{body: `[{"index":1,"score":0.9},{"index":3,"score":0.1},{"index":0,"score":0.3},{"index":2,"score":0.7}]`}
	res, err := newHTTP(t, p, StyleTEI).Rerank(context.Background(), "apple net income", docs, 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Result{{1, 0.9}, {2, 0.7}, {0, 0.3}}; !slices.Equal(res, want) {
		t.Errorf("results %v, want %v", res, want)
	}
	got := p.last()
	texts, _ := got["texts"].([]any)
	if got["query"] != "apple net income" || len(texts) != 4 || got["documents"] != nil || got["top_n"] != nil {
		t.Errorf("request %v", got)
	}
}

func TestHTTPErrors(t *testing.T) {
	cases := []struct {
		style  Style
		status int
		body   string
		check  func(error) bool
	}{
		{StyleCohere, 500, `{"message":"internal"}`, isProvider(500)},
		{StyleCohere, 429, `{"message":"rate"}`, isRateLimited},
		{StyleCohere, 401, `{"message":"bad key"}`, isProvider(401)},
		{StyleCohere, 200, `{"data":[]}`, isMalformed},
		{StyleCohere, 200, `not json`, isBadResponse},
		{StyleCohere, 200, `{"results":[{"index":9,"relevance_score":0.1}]}`, isMalformed},
		{StyleCohere, 200, `{"results":[{"index":1,"relevance_score":0.1},{"index":1,"relevance_score":0.2}]}`, isMalformed},
		{StyleCohere, 200, `{"results":[{"index":1}]}`, isMalformed},
		{StyleJina, 200, `{"results":[{"relevance_score":0.3}]}`, isMalformed},
		{StyleTEI, 200, `{"results":[]}`, isBadResponse},
		{StyleTEI, 200, `[{"index":-1,"score":0.3}]`, isMalformed},
		{StyleTEI, 413, `{"error":"batch size"}`, isProvider(413)},
	}
	for _, c := range cases {
		_, err := newHTTP(t, &fakeAPI{status: c.status, body: c.body}, c.style).Rerank(context.Background(), "q", docs, 2)
		if !c.check(err) {
			t.Errorf("%s %d %s: err = %v", c.style, c.status, c.body, err)
		}
	}
}

func isProvider(status int) func(error) bool {
	return func(err error) bool {
		var pe *provider.ProviderError
		return errors.As(err, &pe) && pe.Status == status
	}
}

func isRateLimited(err error) bool {
	var rl *provider.RateLimitedError
	return errors.As(err, &rl)
}

func isBadResponse(err error) bool {
	var br *provider.BadResponseError
	return errors.As(err, &br)
}

func isMalformed(err error) bool {
	var me *MalformedError
	return errors.As(err, &me)
}

func TestNew(t *testing.T) {
	if r, err := New(Options{Kind: "none"}); r != nil || err != nil {
		t.Errorf("none: %v, %v", r, err)
	}
	if r, err := New(Options{Kind: "http", URL: "http://tei:8080/rerank", Style: StyleTEI}); err != nil || r.Name() != KindHTTP {
		t.Errorf("http: %v, %v", r, err)
	}
	if r, err := New(Options{Kind: "llm", Chat: llm.New(llm.Config{})}); err != nil || r.Name() != KindLLM {
		t.Errorf("llm: %v, %v", r, err)
	}
	var ke *KindError
	for _, o := range []Options{
		{Kind: "cross-encoder"},
		{Kind: "http", URL: "http://tei/rerank", Style: "voyage"},
		{Kind: "http", URL: "tei:8080/rerank", Style: StyleTEI},
		{Kind: "http", URL: "", Style: StyleCohere},
	} {
		if _, err := New(o); !errors.As(err, &ke) {
			t.Errorf("%+v: err = %v", o, err)
		}
	}
	if _, err := New(Options{Kind: "llm"}); err == nil {
		t.Error("llm without chat: no error")
	}
}

func names(ds []Doc) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}

func TestApply(t *testing.T) {
	fused := names(docs)
	cases := []struct {
		name     string
		p        *fakeAPI
		k        int
		want     []string
		applied  bool
		fallback string
		scores   []Scored
	}{
		{"reordered", &fakeAPI{body: `{"results":[{"index":3,"relevance_score":0.9},{"index":1,"relevance_score":0.4}]}`}, 2,
			[]string{"get_ford_current_stock_price", "get_apple_net_income"}, true, "",
			[]Scored{{"get_ford_current_stock_price", 0.9, 3}, {"get_apple_net_income", 0.4, 1}}},
		{"fewer results than k: fused order fills", &fakeAPI{body: `{"results":[{"index":2,"relevance_score":0.8}]}`}, 3,
			[]string{"get_ford_revenue", "get_apple_revenue", "get_apple_net_income"}, true, "", []Scored{{"get_ford_revenue", 0.8, 2}}},
		{"k above the candidates", &fakeAPI{body: `{"results":[{"index":1,"relevance_score":0.8},{"index":0,"relevance_score":0.7},{"index":3,"relevance_score":0.6},{"index":2,"relevance_score":0.5}]}`}, 10,
			[]string{"get_apple_net_income", "get_apple_revenue", "get_ford_current_stock_price", "get_ford_revenue"}, true, "", nil},
		{"provider error", &fakeAPI{status: 503, body: `overloaded`}, 3, fused[:3], false, "provider error: status 503", nil},
		{"malformed", &fakeAPI{body: `{"results":[{"index":7,"relevance_score":0.8}]}`}, 3, fused[:3], false, "malformed rerank answer: index 7 out of range 0..3", nil},
		{"not JSON", &fakeAPI{body: `<html>`}, 3, fused[:3], false, "malformed rerank answer: invalid JSON", nil},
		{"rate limited", &fakeAPI{status: 429, body: `{}`}, 3, fused[:3], false, "provider error: rate limited", nil},
		{"timeout", &fakeAPI{block: true}, 3, fused[:3], false, "timeout after 100ms", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newHTTP(t, c.p, StyleCohere)
			// Only the blocking provider meets the short bound.
			timeout := 10 * time.Second
			if c.p.block {
				timeout = 100 * time.Millisecond
			}
			got, d := Apply(context.Background(), r, "q", docs, c.k, timeout)
			if !slices.Equal(names(got), c.want) {
				t.Errorf("ranking %v, want %v", names(got), c.want)
			}
			if d.Reranker != KindHTTP || d.Applied != c.applied || !strings.HasPrefix(d.Fallback, c.fallback) || (c.fallback == "") != (d.Fallback == "") || d.LatencyMS < 0 {
				t.Errorf("decision %+v", d)
			}
			if c.scores != nil && !slices.Equal(d.Scores, c.scores) {
				t.Errorf("scores %+v, want %+v", d.Scores, c.scores)
			}
		})
	}
}

func TestApplyNone(t *testing.T) {
	got, d := Apply(context.Background(), nil, "q", docs, 2, time.Second)
	if !slices.Equal(names(got), names(docs[:2])) || d.Reranker != KindNone || d.Applied || d.Fallback != "" {
		t.Errorf("ranking %v decision %+v", names(got), d)
	}
	got, d = Apply(context.Background(), newHTTP(t, &fakeAPI{body: `{"results":[]}`}, StyleCohere), "q", nil, 5, time.Second)
	if len(got) != 0 || d.Applied {
		t.Errorf("no candidates: %v %+v", got, d)
	}
	var js map[string]any
	b, _ := json.Marshal(Decision{Reranker: "http", Applied: true, LatencyMS: 1.5, Scores: []Scored{{"a", 0.5, 3}}})
	json.Unmarshal(b, &js)
	if js["reranker"] != "http" || js["latency_ms"] != 1.5 || !strings.Contains(string(b), `"fused_pos":3`) {
		t.Errorf("decision JSON %s", b)
	}
}
