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

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
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
	review             string
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
// a migrated database, and returns the tools' ids by name.
func fill(t *testing.T, pool *pgxpool.Pool) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	exec(t, pool, `INSERT INTO sources (name, kind) VALUES ('acme', 'catalog'), ('beta', 'catalog')`)
	ids := map[string]int64{}
	for _, tl := range catalog {
		schema := tl.schema
		if schema == "" {
			schema = `{"type":"object"}`
		}
		review := tl.review
		if review == "" {
			review = "approved"
		}
		var id int64
		err := pool.QueryRow(ctx, `INSERT INTO tools (source_id, name, original_name, description, input_schema, content_hash, enabled, review_state)
			SELECT id, $2 || '__' || $3, $3, $4, $5, 'h', $6, $7 FROM sources WHERE name = $1 RETURNING id`,
			tl.source, tl.source, tl.name, tl.desc, schema, !tl.disabled, review).Scan(&id)
		if err != nil {
			t.Fatalf("insert %s: %v", tl.name, err)
		}
		ids[tl.source+"__"+tl.name] = id
		if tl.tags != "" {
			exec(t, pool, `INSERT INTO tool_components (tool_id, kind, text, text_hash) VALUES ($1, 'profile_tags', $2, 'h')`, id, tl.tags)
		}
		for i, q := range tl.questions {
			exec(t, pool, `INSERT INTO tool_components (tool_id, kind, ordinal, text, text_hash) VALUES ($1, 'question', $2, $3, 'h')`, id, i, q)
		}
	}
	ensureSpace(t, pool)
	q := db.New(pool)
	profile, err := q.GetProfileByName(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	setID, err := q.CreateVectorSet(ctx, db.CreateVectorSetParams{ProfileID: profile.ID, State: "ready"})
	if err != nil {
		t.Fatal(err)
	}
	exec(t, pool, `UPDATE weight_profiles SET current_set = $1 WHERE name = 'default'`, setID)
	for _, tl := range catalog {
		v := tl.vector
		if v == nil {
			v = hashVector(tl.name + " " + tl.desc)
		}
		exec(t, pool, `INSERT INTO tool_vectors (set_id, tool_id, embedding) VALUES ($1, $2, $3)`,
			setID, ids[tl.source+"__"+tl.name], pgvector.NewVector(normalized(v)))
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

// ensureSpace does what embed.EnsureSpace does at run time: fix the vector dimension and
// build the HNSW index.
func ensureSpace(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	exec(t, pool, `INSERT INTO embedding_space (model, dims) VALUES ('test-hash', 32)`)
	exec(t, pool, `ALTER TABLE tool_vectors ALTER COLUMN embedding TYPE vector(32)`)
	exec(t, pool, `CREATE INDEX tool_vectors_embedding_hnsw ON tool_vectors USING hnsw (embedding vector_cosine_ops)`)
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
	resp, err := s.Search(ctx, r)
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

func mustJSON(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
