package search_test

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"io"
	"log/slog"
	"math"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/auth"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	tgcatalog "github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/tdwa"
	"github.com/toolgate/toolgate/internal/testfactory"
)

const dims = 32

// hashEmbedder is a test Embedder: a bag of words hashed into dims buckets (so texts sharing
// words are close), except for texts with a fixed vector in known.
type hashEmbedder struct{ known map[string][]float32 }

func (hashEmbedder) Model() string { return "test-hash" }
func (hashEmbedder) Dims() int     { return dims }
func (e hashEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if v, ok := e.known[t]; ok {
			out[i] = normalized(v)
			continue
		}
		out[i] = hashVector(t)
	}
	return out, nil
}

func hashVector(text string) []float32 {
	v := make([]float32, dims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%dims]++
	}
	v[dims-1] += 0.1 // never the zero vector
	return normalized(v)
}

func normalized(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	n := float32(math.Sqrt(s))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x / n
	}
	return out
}

// unit returns the basis vector i (plus a little of dimension j, for "close to" vectors).
func unit(i, j int, eps float32) []float32 {
	v := make([]float32, dims)
	v[i] = 1
	v[j] += eps
	return v
}

type tool struct {
	source, name, desc string
	schema             string
	disabled           bool
	review             string // a review state other than approved
	tags               string
	questions          []string
	vector             []float32 // nil: hashVector(name + desc)
}

// catalog is the hand-made test catalog. The weather tool has a vector no word of the
// query "will it rain tomorrow in Lisbon" shares, but the embedder maps that query close to it.
var catalog = []tool{
	{source: "acme", name: "get_stock_price", desc: "Get the latest stock price for a ticker symbol",
		schema: `{"type":"object","properties":{"ticker":{"type":"string","description":"Ticker symbol"}}}`,
		tags:   "finance, stocks", questions: []string{"how much is Apple trading at"}},
	{source: "acme", name: "get_exchange_rate", desc: "Convert an amount between two currencies at the current exchange rate",
		schema: `{"type":"object","properties":{"from":{"type":"string"},"to":{"type":"string"}}}`, tags: "finance"},
	{source: "acme", name: "stock_news", desc: "Latest news articles about a company and its stock"},
	{source: "acme", name: "sendEmail", desc: "Send an email message to a recipient", tags: "communication"},
	{source: "beta", name: "get_weather", desc: "Weather forecast for a city", vector: unit(3, 4, 0)},
	{source: "beta", name: "create_invoice", desc: "Create an invoice for a customer with line items", tags: "billing"},
	{source: "acme", name: "hidden_price", desc: "Stock price from a disabled tool", disabled: true, vector: unit(5, 6, 0)},
	{source: "acme", name: "pending_price", desc: "Stock price awaiting review", review: "pending", vector: unit(5, 6, 0.01)},
}

const rainQuery = "will it rain tomorrow in Lisbon"

var testEmbedder = hashEmbedder{known: map[string][]float32{
	rainQuery:         unit(3, 4, 0.2),
	"hidden vector":   unit(5, 6, 0),
	"acme filler vec": unit(7, 8, 0),
}}

// setup creates a database with the catalog, a vector space of dims, an HNSW index and an
// active weight profile whose current set holds every tool's vector.
func setup(t *testing.T) (*pgxpool.Pool, map[string]int64) {
	t.Helper()
	pool := pgtest.NewPool(t)
	return pool, fill(t, pool)
}

// fill writes the catalog, its vectors in the default profile's set and the HNSW index to
// a migrated database, through the code that writes them in production, and returns the
// tools' ids by name: each source's tools are imported (sources.Import), switched off or
// held for review with the queries the admin API and a sync use, given their tags and
// questions as enrichment stores components, and their hand-made vectors (which the
// ranking tests rely on) go into a ready set of the embedding space testEmbedder fixes.
func fill(t *testing.T, pool *pgxpool.Pool) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	q := db.New(pool)
	for _, src := range []string{"acme", "beta"} {
		var tools []tgcatalog.Tool
		for _, tl := range catalog {
			if tl.source == src {
				def := testfactory.Tool(tl.name, tl.desc)
				if tl.schema != "" {
					def.InputSchema = json.RawMessage(tl.schema)
				}
				tools = append(tools, def)
			}
		}
		testfactory.Catalog(ctx, t, pool, src, tools, nil)
	}
	if err := embed.EnsureSpace(ctx, pool, testEmbedder); err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	for _, tl := range catalog {
		name := tl.source + "__" + tl.name
		stored, err := q.GetToolByName(ctx, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ids[name] = stored.ID
		if tl.disabled {
			if _, err := q.SetToolEnabled(ctx, db.SetToolEnabledParams{Name: name, Enabled: false}); err != nil {
				t.Fatal(err)
			}
		}
		if tl.review != "" {
			if err := q.SetToolReviewStates(ctx, db.SetToolReviewStatesParams{Ids: []int64{stored.ID}, ReviewStates: []string{tl.review}}); err != nil {
				t.Fatal(err)
			}
		}
		comps := db.UpsertToolComponentsParams{ToolID: stored.ID, Model: testEmbedder.Model()}
		add := func(kind string, ordinal int, text string) {
			comps.Kinds = append(comps.Kinds, kind)
			comps.Ordinals = append(comps.Ordinals, int32(ordinal))
			comps.Texts = append(comps.Texts, text)
			comps.TextHashes = append(comps.TextHashes, enrich.Component{Text: text}.Hash())
			comps.Embeddings = append(comps.Embeddings, pgvector.NewVector(hashVector(text)).String())
		}
		if tl.tags != "" {
			add(tdwa.KindProfileTags, 0, tl.tags)
		}
		for i, question := range tl.questions {
			add(tdwa.KindQuestion, i, question)
		}
		if len(comps.Kinds) > 0 {
			if err := q.UpsertToolComponents(ctx, comps); err != nil {
				t.Fatal(err)
			}
		}
	}
	profile, err := q.GetProfileByName(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	setID, err := q.CreateVectorSet(ctx, db.CreateVectorSetParams{ProfileID: profile.ID, State: db.VectorSetReady})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.SetProfileCurrentSet(ctx, db.SetProfileCurrentSetParams{ID: profile.ID, CurrentSet: pgtype.Int8{Int64: setID, Valid: true}}); err != nil {
		t.Fatal(err)
	}
	var vectors []db.UpsertToolVectorParams
	for _, tl := range catalog {
		v := tl.vector
		if v == nil {
			v = hashVector(tl.name + " " + tl.desc)
		}
		vectors = append(vectors, db.UpsertToolVectorParams{SetID: setID, ToolID: ids[tl.source+"__"+tl.name], Embedding: pgvector.NewVector(normalized(v))})
	}
	if err := db.ExecBatch(q.UpsertToolVector(ctx, vectors)); err != nil {
		t.Fatal(err)
	}
	flush(t, pool)
	return ids
}

// flush brings the lexical index up to date with the rows written so far, as the catalog
// write paths do after their commit.
func flush(t testing.TB, pool *pgxpool.Pool) {
	t.Helper()
	if _, err := lexical.Flush(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
}

func exec(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func newService(pool *pgxpool.Pool) *search.Service {
	return search.New(pool, testEmbedder, search.DefaultSettings(), slog.New(slog.NewTextHandler(io.Discard, nil)))
}

func names(r search.Response) []string {
	out := make([]string, len(r.Results))
	for i, x := range r.Results {
		out[i] = x.Name
	}
	return out
}

func mustSearch(t *testing.T, ctx context.Context, s *search.Service, r search.Request) search.Response {
	t.Helper()
	resp, err := s.Search(ctx, callerOf(ctx), r)
	if err != nil {
		t.Fatalf("search %+v: %v", r, err)
	}
	return resp
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// mustJSON is the JSON object v marshals to.
func mustJSON(t *testing.T, v any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// callerOf is the caller a test put in ctx with auth.WithCaller, or search.Internal().
func callerOf(ctx context.Context) auth.Caller {
	if c := auth.FromContext(ctx); c != nil {
		return *c
	}
	return search.Internal()
}
