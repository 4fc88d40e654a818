package search_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"
	pgxvec "github.com/pgvector/pgvector-go/pgx"

	"github.com/toolgate/toolgate/internal/auth"
	tgcatalog "github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
)

func TestRankingPerMode(t *testing.T) {
	t.Parallel()
	pool, _ := setup(t)
	s := newService(pool)
	ctx := context.Background()

	// lexical: the stock price tool has "stock" and "price" in its name (weight A), the news
	// tool "stock" in its name only, the exchange-rate tool neither.
	got := names(mustSearch(t, ctx, s, search.Request{Query: "latest stock price", Mode: search.ModeLexical, K: 3}))
	want := []string{"acme__get_stock_price", "acme__stock_news"}
	if !slices.Equal(got[:2], want) {
		t.Errorf("lexical: got %v, want prefix %v", got, want)
	}

	// vector: the rain query shares no word with the weather tool but is embedded close to it.
	for _, mode := range []search.Mode{search.ModeVector, search.ModeHybrid} {
		resp := mustSearch(t, ctx, s, search.Request{Query: rainQuery, Mode: mode, K: 3})
		if len(resp.Results) == 0 || resp.Results[0].Name != "beta__get_weather" {
			t.Errorf("%s: got %v, want beta__get_weather first", mode, names(resp))
		} else if resp.Results[0].VectorRank == nil || *resp.Results[0].VectorRank != 1 || resp.Results[0].LexicalRank != nil {
			t.Errorf("%s: ranks %+v", mode, resp.Results[0])
		}
	}
	lex := mustSearch(t, ctx, s, search.Request{Query: rainQuery, Mode: search.ModeLexical, K: 3})
	if contains(names(lex), "beta__get_weather") {
		t.Errorf("lexical found the weather tool with no shared word: %v", names(lex))
	}

	// hybrid: a tool found by both branches beats one found by a single branch.
	resp := mustSearch(t, ctx, s, search.Request{Query: "send an email message", Mode: search.ModeHybrid, K: 3})
	first := resp.Results[0]
	if first.Name != "acme__sendEmail" || first.LexicalRank == nil || first.VectorRank == nil {
		t.Errorf("hybrid: got %+v", resp.Results)
	}
	if resp.Results[0].Score <= resp.Results[1].Score {
		t.Errorf("hybrid scores not decreasing: %v", resp.Results)
	}
	// the default min-max fusion: first in both branches is the sum of the branch weights
	if *first.LexicalRank == 1 && *first.VectorRank == 1 && abs(first.Score-2.5) > 1e-9 {
		t.Errorf("min-max fused score %v, want 1.5 + 1", first.Score)
	}
	// reciprocal rank fusion: Σ w / (k_rrf + rank)
	st := search.DefaultSettings()
	st.Fusion = search.FusionRRF
	rrf := search.New(pool, testEmbedder, st, slog.New(slog.NewTextHandler(io.Discard, nil)))
	resp = mustSearch(t, ctx, rrf, search.Request{Query: "send an email message", Mode: search.ModeHybrid, K: 3})
	first = resp.Results[0]
	if first.Name != "acme__sendEmail" || first.LexicalRank == nil || first.VectorRank == nil {
		t.Fatalf("hybrid rrf: got %+v", resp.Results)
	}
	if want := 1.5/(60.0+float64(*first.LexicalRank)) + 1/(60.0+float64(*first.VectorRank)); abs(first.Score-want) > 1e-9 {
		t.Errorf("rrf fused score %v, want %v", first.Score, want)
	}
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

func TestExactNameFirstInEveryMode(t *testing.T) {
	t.Parallel()
	pool, _ := setup(t)
	s := newService(pool)
	ctx := context.Background()
	// Every other word of the query favours the stock price tool.
	for _, q := range []string{
		"get_weather",
		"beta__get_weather",
		"get weather",
		"stock price ticker symbol latest get_weather",
		"please call getWeather for the latest stock price",
	} {
		for _, mode := range []search.Mode{search.ModeLexical, search.ModeVector, search.ModeHybrid} {
			resp := mustSearch(t, ctx, s, search.Request{Query: q, Mode: mode, K: 3})
			if len(resp.Results) == 0 || resp.Results[0].Name != "beta__get_weather" || !resp.Results[0].NameMatch {
				t.Errorf("%s %q: got %v, want beta__get_weather first", mode, q, names(resp))
			}
		}
	}
	// a name that is only part of a word sequence does not match: "get" alone is no tool name.
	resp := mustSearch(t, ctx, s, search.Request{Query: "get", Mode: search.ModeLexical, K: 5})
	for _, r := range resp.Results {
		if r.NameMatch {
			t.Errorf("%q matched the name of %s", "get", r.Name)
		}
	}
	// A tool named with a common word goes first only when the query names it, not when
	// the word is part of a longer request.
	exec(t, pool, `INSERT INTO tools (source_id, name, original_name, description, input_schema, content_hash)
		SELECT id, 'beta__news', 'news', 'Headlines of the day', '{"type":"object"}', 'h' FROM sources WHERE name = 'beta'`)
	flush(t, pool)
	for q, first := range map[string]bool{
		"news": true, "use the news tool": true, "beta__news": true,
		"latest stock news": false, "news about the stock price of a ticker": false,
	} {
		resp := mustSearch(t, ctx, s, search.Request{Query: q, Mode: search.ModeLexical, K: 3})
		named := len(resp.Results) > 0 && resp.Results[0].Name == "beta__news" && resp.Results[0].NameMatch
		if named != first {
			t.Errorf("%q: got %v (name match of the first: %v), want beta__news named first: %v",
				q, names(resp), len(resp.Results) > 0 && resp.Results[0].NameMatch, first)
		}
		for _, r := range resp.Results {
			if r.NameMatch && !first {
				t.Errorf("%q matched the name of %s", q, r.Name)
			}
		}
	}
}

func TestVariantsFused(t *testing.T) {
	t.Parallel()
	pool, _ := setup(t)
	s := newService(pool)
	ctx := context.Background()
	resp := mustSearch(t, ctx, s, search.Request{Query: "create invoice", Queries: []string{"currency exchange rate"},
		Mode: search.ModeLexical, K: 5})
	got := names(resp)
	if !contains(got, "beta__create_invoice") || !contains(got, "acme__get_exchange_rate") {
		t.Errorf("variants not fused: %v", got)
	}
	for _, r := range resp.Results[:2] {
		if r.LexicalRank == nil || *r.LexicalRank != 1 {
			t.Errorf("%s: lexical rank %v, want 1 (first of its variant)", r.Name, r.LexicalRank)
		}
	}
}

func TestFiltersNeverLeak(t *testing.T) {
	t.Parallel()
	pool, _ := setup(t)
	s := newService(pool)
	ctx := context.Background()
	modes := []search.Mode{search.ModeLexical, search.ModeVector, search.ModeHybrid}
	queries := []string{"stock price", "get", rainQuery, "hidden vector", "hidden_price", "pending_price", "acme__hidden_price"}
	check := func(label string, ctx context.Context, r search.Request, ok func(name string) bool) {
		t.Helper()
		for _, mode := range modes {
			for _, q := range queries {
				r.Mode, r.Query, r.K = mode, q, 100
				for _, res := range mustSearch(t, ctx, s, r).Results {
					if !ok(res.Name) {
						t.Errorf("%s %s %q: leaked %s", label, mode, q, res.Name)
					}
				}
			}
		}
	}
	visible := func(n string) bool { return n != "acme__hidden_price" && n != "acme__pending_price" }
	check("no filter", ctx, search.Request{}, visible)
	check("sources=beta", ctx, search.Request{Sources: []string{"beta"}},
		func(n string) bool { return strings.HasPrefix(n, "beta__") })
	check("tags=finance", ctx, search.Request{Tags: []string{"Finance"}},
		func(n string) bool { return n == "acme__get_stock_price" || n == "acme__get_exchange_rate" })
	beta := auth.WithCaller(ctx, &auth.Caller{Name: "k1", Scope: auth.ScopeSearch, Sources: []string{"beta"}})
	check("caller sees beta", beta, search.Request{}, func(n string) bool { return strings.HasPrefix(n, "beta__") })
	nothing := auth.WithCaller(ctx, &auth.Caller{Name: "k2", Scope: auth.ScopeSearch, Sources: []string{}})
	check("caller sees nothing", nothing, search.Request{}, func(string) bool { return false })

	// a source the caller may not see is as unknown as a missing one
	_, err := s.Search(beta, callerOf(beta), search.Request{Query: "stock", Sources: []string{"acme"}})
	var unknown *search.UnknownError
	if !errors.As(err, &unknown) || unknown.Kind != "source" {
		t.Errorf("hidden source: got %v, want UnknownError", err)
	}
	// tags filter must still find the tagged tool by its name
	resp := mustSearch(t, ctx, s, search.Request{Query: "create_invoice", Tags: []string{"billing"}, Mode: search.ModeHybrid})
	if got := names(resp); !slices.Equal(got, []string{"beta__create_invoice"}) {
		t.Errorf("tags=billing: got %v", got)
	}
}

// With a restrictive filter the vector branch must still fill k: 300 tools of a big source
// are all nearer to the query than the 12 tools of a small one, so a plain HNSW scan with
// ef_search 40 would return none of the small ones.
func TestVectorFilterFillsK(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := setup(t)
	// Each tool's vector is its source's axis (8 for big, 9 for small) plus a little noise.
	rng := rand.New(rand.NewPCG(1, 2))
	setID := testfactory.CurrentSet(ctx, t, pool, "default")
	var vectors []db.UpsertToolVectorParams
	// The big source's first: the HNSW graph is built in insertion order.
	for _, src := range []struct {
		name       string
		tools, dim int
	}{{"big", 300, 8}, {"small", 12, 9}} {
		var tools []tgcatalog.Tool
		for i := 1; i <= src.tools; i++ {
			tools = append(tools, testfactory.Tool(fmt.Sprintf("t%d", i), "filler"))
		}
		_, res := testfactory.Catalog(ctx, t, pool, src.name, tools, nil)
		for _, id := range res.Changed {
			v := make([]float32, dims)
			for i := range v {
				v[i] = rng.Float32() * 0.1
			}
			v[src.dim-1] = 1
			vectors = append(vectors, db.UpsertToolVectorParams{SetID: setID, ToolID: id, Embedding: pgvector.NewVector(v)})
		}
	}
	if err := db.ExecBatch(db.New(pool).UpsertToolVector(ctx, vectors)); err != nil {
		t.Fatal(err)
	}
	// On so small a table the planner would rather sort every vector than use the index:
	// make it use the HNSW index, as it does on real catalogs.
	cfg := pool.Config().Copy()
	cfg.ConnConfig.RuntimeParams["enable_seqscan"] = "off"
	cfg.ConnConfig.RuntimeParams["enable_sort"] = "off"
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error { return pgxvec.RegisterTypes(ctx, c) }
	indexed, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer indexed.Close()
	st := search.DefaultSettings()
	st.EfSearch = 40
	s := search.New(indexed, testEmbedder, st, slog.New(slog.NewTextHandler(io.Discard, nil)))
	resp := mustSearch(t, ctx, s, search.Request{Query: "acme filler vec", Mode: search.ModeVector, K: 10, Sources: []string{"small"}})
	if len(resp.Results) != 10 {
		t.Fatalf("got %d results, want 10: %v", len(resp.Results), names(resp))
	}
	for _, r := range resp.Results {
		if !strings.HasPrefix(r.Name, "small__") {
			t.Errorf("leaked %s", r.Name)
		}
	}
}

func TestFormats(t *testing.T) {
	t.Parallel()
	pool, _ := setup(t)
	s := newService(pool)
	ctx := context.Background()
	get := func(f search.Format) map[string]any {
		resp := mustSearch(t, ctx, s, search.Request{Query: "get_stock_price", Format: f, K: 1, Mode: search.ModeLexical})
		if len(resp.Results) != 1 {
			t.Fatalf("%s: %v", f, names(resp))
		}
		return mustJSON(t, resp.Results[0].Tool)
	}
	o := get(search.FormatOpenAI)
	fn, _ := o["function"].(map[string]any)
	if o["type"] != "function" || fn["name"] != "acme__get_stock_price" || fn["parameters"].(map[string]any)["type"] != "object" {
		t.Errorf("openai: %v", o)
	}
	a := get(search.FormatAnthropic)
	if a["name"] != "acme__get_stock_price" || a["input_schema"] == nil || a["description"] != "Get the latest stock price for a ticker symbol" {
		t.Errorf("anthropic: %v", a)
	}
	m := get(search.FormatMCP)
	if m["name"] != "acme__get_stock_price" || m["inputSchema"] == nil {
		t.Errorf("mcp: %v", m)
	}
	r := get(search.FormatRaw)
	if r["original_name"] != "get_stock_price" || r["source"] != "acme" {
		t.Errorf("raw: %v", r)
	}
}

func TestInputLimits(t *testing.T) {
	t.Parallel()
	pool, _ := setup(t)
	s := newService(pool)
	ctx := context.Background()
	for _, tc := range []struct {
		req   search.Request
		field string
	}{
		{search.Request{Query: ""}, "query"},
		{search.Request{Query: " \t\n "}, "query"},
		{search.Request{Query: strings.Repeat("é", 2001)}, "query"},
		{search.Request{Query: "x", K: 101}, "k"},
		{search.Request{Query: "x", K: -1}, "k"},
		{search.Request{Query: "x", Mode: "fuzzy"}, "mode"},
		{search.Request{Query: "x", Format: "xml"}, "format"},
		{search.Request{Query: "x", Queries: []string{"ok", "  "}}, "queries[1]"},
		{search.Request{Query: "x", Tags: []string{""}}, "tags"},
		// PostgreSQL text holds neither NUL nor invalid UTF-8: these must never reach it.
		{search.Request{Query: "stock\x00price"}, "query"},
		{search.Request{Query: "stock \xff price"}, "query"},
		{search.Request{Query: "x", Queries: []string{"ok", "a\x00"}}, "queries[1]"},
		{search.Request{Query: "x", Sources: []string{"acme", "be\x00ta"}}, "sources[1]"},
		{search.Request{Query: "x", Tags: []string{"\x00"}}, "tags[0]"},
		{search.Request{Query: "x", Profile: "default\x00"}, "profile"},
		{search.Request{Query: "x", SessionID: "s\xc3"}, "session_id"},
		{search.Request{Query: "x", Plan: "full\x00"}, "plan"},
		{search.Request{Query: "x", Sources: []string{strings.Repeat("s", 201)}}, "sources[0]"},
	} {
		_, err := s.Search(ctx, callerOf(ctx), tc.req)
		var inv *search.InvalidRequestError
		if !errors.As(err, &inv) || inv.Field != tc.field {
			t.Errorf("%+v: got %v, want InvalidRequestError on %s", tc.req, err, tc.field)
		}
	}
	if _, err := s.Search(ctx, callerOf(ctx), search.Request{Query: strings.Repeat("é", 2000), Mode: search.ModeLexical}); err != nil {
		t.Errorf("2000 characters must be allowed: %v", err)
	}
	var unknown *search.UnknownError
	if _, err := s.Search(ctx, callerOf(ctx), search.Request{Query: "x", Profile: "nope"}); !errors.As(err, &unknown) || unknown.Kind != "profile" {
		t.Errorf("unknown profile: %v", err)
	}
	if _, err := s.Search(ctx, callerOf(ctx), search.Request{Query: "x", Sources: []string{"beta", "gamma"}}); !errors.As(err, &unknown) ||
		unknown.Kind != "source" || !slices.Equal(unknown.Names, []string{"gamma"}) {
		t.Errorf("unknown source: %v", err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM search_log`).Scan(&n); err != nil || n != 1 {
		t.Errorf("rejected requests must not be logged: %d rows, %v", n, err)
	}
}

// TestRequestJSONK: over JSON an absent k is the default and an explicit 0 is out of
// range, like any k below 1 (it used to be taken for the default).
func TestRequestJSONK(t *testing.T) {
	t.Parallel()
	var r search.Request
	if err := json.Unmarshal([]byte(`{"query":"x"}`), &r); err != nil || r.K != 0 {
		t.Errorf("absent k: %+v %v", r, err)
	}
	if err := json.Unmarshal([]byte(`{"query":"x","k":7}`), &r); err != nil || r.K != 7 {
		t.Errorf("k 7: %+v %v", r, err)
	}
	var inv *search.InvalidRequestError
	if err := json.Unmarshal([]byte(`{"query":"x","k":0}`), &r); !errors.As(err, &inv) || inv.Field != "k" {
		t.Errorf("k 0: %v, want InvalidRequestError on k", err)
	}
	if err := json.Unmarshal([]byte(`{"query":"x","kay":1}`), &r); err == nil || !strings.Contains(err.Error(), "unknown field") {
		t.Errorf("unknown field: %v", err)
	}
}

// TestFeedbackIsTheSearchersOwn: feedback on a search comes only from the key that made it
// (not another key, not a later key that took a revoked key's name; a search made without a
// key only from the same keyless caller), names only tools that search returned, and has a
// sane length; anything else changes nothing.
func TestFeedbackIsTheSearchersOwn(t *testing.T) {
	t.Parallel()
	pool, _ := setup(t)
	s := newService(pool)
	as := func(name string, keyID int64) context.Context {
		return auth.WithCaller(context.Background(), &auth.Caller{Name: name, KeyID: keyID, Scope: auth.ScopeSearch})
	}
	owner, other, sameName, open := as("agent-a", 1), as("agent-b", 2), as("agent-a", 3), as("open", 0)
	resp := mustSearch(t, owner, s, search.Request{Query: "stock price", Mode: search.ModeLexical, K: 2})
	if len(resp.Results) == 0 {
		t.Fatal("no results")
	}
	returned := resp.Results[0].Name
	ok := true
	fb := func(name string) []search.Feedback { return []search.Feedback{{Name: name, Success: &ok}} }

	var nf *search.NotFoundError
	for label, ctx := range map[string]context.Context{"another key": other, "a key with the same name": sameName, "no key": open} {
		if _, err := s.RecordFeedback(ctx, callerOf(ctx), resp.SearchID, fb(returned)); !errors.As(err, &nf) {
			t.Errorf("%s: %v, want NotFoundError", label, err)
		}
	}
	var inv *search.InvalidRequestError
	for _, name := range []string{"beta__get_weather", "acme__hidden_price", strings.Repeat("x", 100_000), "a\x00b"} {
		if _, err := s.RecordFeedback(owner, callerOf(owner), resp.SearchID, fb(name)); !errors.As(err, &inv) || inv.Field != "tools[0].name" {
			t.Errorf("%.40q: %v, want InvalidRequestError on tools[0].name", name, err)
		}
	}
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM search_feedback`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("refused feedback stored %d rows (%v)", n, err)
	}
	if _, err := s.RecordFeedback(owner, callerOf(owner), resp.SearchID, fb(returned)); err != nil {
		t.Fatalf("the searcher's own feedback: %v", err)
	}
	// A search without a key is its keyless caller's.
	keyless := mustSearch(t, open, s, search.Request{Query: "stock price", Mode: search.ModeLexical, K: 2})
	if _, err := s.RecordFeedback(owner, callerOf(owner), keyless.SearchID, fb(returned)); !errors.As(err, &nf) {
		t.Errorf("a key on a keyless search: %v, want NotFoundError", err)
	}
	if _, err := s.RecordFeedback(open, callerOf(open), keyless.SearchID, fb(returned)); err != nil {
		t.Errorf("the keyless caller's own feedback: %v", err)
	}
}

func TestWithoutEmbedder(t *testing.T) {
	t.Parallel()
	pool, _ := setup(t)
	s := search.New(pool, nil, search.DefaultSettings(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx := context.Background()
	for _, mode := range []search.Mode{search.ModeLexical, search.ModeHybrid} {
		resp := mustSearch(t, ctx, s, search.Request{Query: "stock price", Mode: mode})
		if len(resp.Results) == 0 || resp.Results[0].Name != "acme__get_stock_price" || resp.Results[0].VectorRank != nil {
			t.Errorf("%s without embedder: %+v", mode, resp.Results)
		}
	}
	if _, err := s.Search(ctx, callerOf(ctx), search.Request{Query: "stock", Mode: search.ModeVector}); !errors.Is(err, search.ErrNoEmbedder) {
		t.Errorf("vector without embedder: %v", err)
	}
}

func TestLogAndFeedback(t *testing.T) {
	t.Parallel()
	pool, _ := setup(t)
	s := newService(pool)
	ctx := auth.WithCaller(context.Background(), &auth.Caller{Name: "agent-key", Scope: auth.ScopeSearch})
	resp := mustSearch(t, ctx, s, search.Request{Query: "stock price", Queries: []string{"share quote"}, K: 2,
		SessionID: "sess-1", Tags: []string{"finance"}})
	var (
		query, mode, caller, session string
		variants                     []string
		k, count                     int
		results, filters             []byte
		top                          float64
	)
	err := pool.QueryRow(ctx, `SELECT query, variants, mode, k, caller, session_id, results, result_count, top_score, filters
		FROM search_log WHERE id = $1`, resp.SearchID).Scan(&query, &variants, &mode, &k, &caller, &session, &results, &count, &top, &filters)
	if err != nil {
		t.Fatal(err)
	}
	if query != "stock price" || !slices.Equal(variants, []string{"share quote"}) || mode != "hybrid" || k != 2 ||
		caller != "agent-key" || session != "sess-1" || count != len(resp.Results) || top != resp.Results[0].Score {
		t.Errorf("log row: %q %v %q %d %q %q %d %v", query, variants, mode, k, caller, session, count, top)
	}
	var logged []struct {
		Name        string  `json:"name"`
		Score       float64 `json:"score"`
		LexicalRank *int    `json:"lexical_rank"`
	}
	if err := json.Unmarshal(results, &logged); err != nil {
		t.Fatal(err)
	}
	if len(logged) != len(resp.Results) {
		t.Fatalf("logged %v", logged)
	}
	for i, l := range logged {
		if l.Name != resp.Results[i].Name || l.Score != resp.Results[i].Score {
			t.Errorf("logged %d: %+v, returned %+v", i, l, resp.Results[i])
		}
	}
	if !strings.Contains(string(filters), `"finance"`) {
		t.Errorf("filters %s", filters)
	}

	ok := true
	if _, err := s.RecordFeedback(ctx, callerOf(ctx), resp.SearchID, []search.Feedback{{Name: resp.Results[0].Name, Success: &ok}}); err != nil {
		t.Fatal(err)
	}
	var mrr float64
	if err := pool.QueryRow(ctx, `SELECT mrr FROM search_profile_quality`).Scan(&mrr); err != nil || mrr != 1 {
		t.Errorf("search_profile_quality mrr %v, %v", mrr, err)
	}
	var nf *search.NotFoundError
	if _, err := s.RecordFeedback(ctx, callerOf(ctx), resp.SearchID+1000, []search.Feedback{{Name: "x", Success: &ok}}); !errors.As(err, &nf) {
		t.Errorf("unknown search: %v", err)
	}
	var inv *search.InvalidRequestError
	if _, err := s.RecordFeedback(ctx, callerOf(ctx), resp.SearchID, []search.Feedback{{Name: "x"}}); !errors.As(err, &inv) {
		t.Errorf("missing success: %v", err)
	}

	// a search that finds nothing still gets its log row and id
	empty := mustSearch(t, ctx, s, search.Request{Query: "zzzqqq", Mode: search.ModeLexical})
	if empty.SearchID == 0 || len(empty.Results) != 0 {
		t.Errorf("empty search: %+v", empty)
	}
	var zero int
	if err := pool.QueryRow(ctx, `SELECT searches FROM search_zero_result_queries WHERE query = 'zzzqqq'`).Scan(&zero); err != nil || zero != 1 {
		t.Errorf("zero-result view: %d %v", zero, err)
	}
}

// A catalog name the model APIs refuse ("." or more than 64 characters) is handed to them
// as its function name in the openai, anthropic and mcp formats; the result's own name and
// the raw format keep the catalog name, so one answer maps each to the other.
func TestFormatsMapNamesTheModelAPIsRefuse(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	long := "lookup_" + strings.Repeat("x", 70)
	testfactory.Catalog(ctx, t, pool, "docs", []tgcatalog.Tool{
		testfactory.Tool("v1.search_docs", "Search the documentation pages."),
		testfactory.Tool(long, "Lookup of an invoice by its number."),
	}, nil)
	s := newService(pool)
	for _, tc := range []struct{ query, name string }{
		{"search documentation pages", "docs__v1.search_docs"},
		{"invoice number lookup", "docs__" + long},
	} {
		fn := tgcatalog.FunctionName(tc.name)
		if fn == tc.name {
			t.Fatalf("%s: the test needs a name that is mapped", tc.name)
		}
		for _, f := range []search.Format{search.FormatOpenAI, search.FormatAnthropic, search.FormatMCP, search.FormatRaw} {
			resp := mustSearch(t, ctx, s, search.Request{Query: tc.query, Format: f, K: 1, Mode: search.ModeLexical})
			if len(resp.Results) != 1 || resp.Results[0].Name != tc.name {
				t.Fatalf("%s %q: %v, want %s", f, tc.query, names(resp), tc.name)
			}
			m := mustJSON(t, resp.Results[0].Tool)
			got := m["name"]
			if f == search.FormatOpenAI {
				got = m["function"].(map[string]any)["name"]
			}
			want := fn
			if f == search.FormatRaw {
				want = tc.name
			}
			if got != want {
				t.Errorf("%s: tool name %v, want %s", f, got, want)
			}
			if f != search.FormatOpenAI {
				continue
			}
			// Feedback may name the tool by either name: one report of it, the last one given.
			yes, no := true, false
			if n, err := s.RecordFeedback(ctx, callerOf(ctx), resp.SearchID, []search.Feedback{{Name: fn, Success: &yes}, {Name: tc.name, Success: &no}}); err != nil || n != 1 {
				t.Fatalf("feedback naming %s and %s: %d recorded, %v; want 1", fn, tc.name, n, err)
			}
			var labelled string
			var success bool
			if err := pool.QueryRow(ctx, `SELECT tool_name, success FROM search_labels WHERE search_id = $1`, resp.SearchID).Scan(&labelled, &success); err != nil || labelled != tc.name || success {
				t.Errorf("label of search %d: %q %v, %v; want %s unsuccessful", resp.SearchID, labelled, success, err, tc.name)
			}
		}
	}
}
