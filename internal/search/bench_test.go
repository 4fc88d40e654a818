package search_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
)

// The search benchmark (docs/benchmarks.md, section Search):
//
//	go test -run '^$' -bench BenchmarkSearch -benchtime 2000x ./internal/search
//
// builds catalogs of TOOLGATE_BENCH_SIZES tools (default 5000,50000), half ScaleMCP-style
// company tools (five per synthetic company: get_{company}_{function}), half generic tools
// made of common verbs and a few hundred nouns, embedded by a hashing bag-of-words embedder
// (benchDims dimensions), so vectors cluster like their texts do. It reports p50/p95/p99
// latency and throughput with 8 concurrent clients for hybrid k=10 search, lexical search
// of very common words, and the bare pgvector KNN query on the same vectors (the floor).
// TOOLGATE_BENCH_CLIENTS changes the number of concurrent clients.

const benchDims = 256

type benchEmbedder struct{}

func (benchEmbedder) Model() string { return "bench-hash" }
func (benchEmbedder) Dims() int     { return benchDims }
func (benchEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = benchVector(t)
	}
	return out, nil
}

// benchVector hashes each word into a signed bucket; texts sharing words are close.
func benchVector(text string) []float32 {
	v := make([]float32, benchDims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		h := fnv.New64a()
		h.Write([]byte(w))
		s := h.Sum64()
		sign := float32(1)
		if s>>63 == 1 {
			sign = -1
		}
		v[s%benchDims] += sign
		v[(s>>20)%benchDims] += sign * 0.5
	}
	v[0] += 0.01
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

var (
	syllables = []string{"nor", "vex", "tal", "qui", "mar", "zen", "lo", "pra", "ket", "dun", "sol", "ari", "bex", "cor", "fin", "gra", "hol", "ix", "jun", "kra"}
	suffixes  = []string{"Dynamics", "Holdings", "Systems", "Labs", "Energy", "Foods", "Bank", "Motors", "Health", "Media"}
	verbs     = []string{"get", "list", "create", "update", "delete", "search", "send", "fetch", "sync", "export"}
	nouns     = func() []string {
		var out []string
		for i := 0; i < 400; i++ {
			out = append(out, syllables[i%20]+syllables[(i/20)%20]+"a")
		}
		return out
	}()
	common = []string{"the", "data", "for", "a", "list", "of", "items", "get", "with", "and", "record", "value", "information"}
)

type benchTool struct{ name, desc, schema string }

func benchCatalog(n int, rng *rand.Rand) []benchTool {
	out := make([]benchTool, 0, n)
	for c := 0; len(out) < n/2; c++ {
		company := dataset.Company{Name: fmt.Sprintf("%s%s%s %s", strings.ToUpper(syllables[c%20][:1])+syllables[c%20][1:],
			syllables[(c/20)%20], syllables[(c/400)%20], suffixes[(c/8000+c)%10]) + " " + strconv.Itoa(c)}
		for _, t := range dataset.Tools([]dataset.Company{company}) {
			out = append(out, benchTool{t.Name, t.Description, string(t.InputSchema)})
		}
	}
	for i := 0; len(out) < n; i++ {
		v, a, b := verbs[rng.IntN(len(verbs))], nouns[rng.IntN(len(nouns))], nouns[rng.IntN(len(nouns))]
		var desc []string
		desc = append(desc, strings.Title(v), "the", a, "of", "a", b) //nolint:staticcheck // ASCII words
		for j := 0; j < 6+rng.IntN(10); j++ {
			if rng.IntN(2) == 0 {
				desc = append(desc, common[rng.IntN(len(common))])
			} else {
				desc = append(desc, nouns[rng.IntN(len(nouns))])
			}
		}
		out = append(out, benchTool{fmt.Sprintf("%s_%s_%s_%d", v, a, b, i), strings.Join(desc, " ") + ".",
			fmt.Sprintf(`{"type":"object","properties":{"%s_id":{"type":"string","description":"Identifier of the %s"}}}`, a, a)})
	}
	return out
}

// benchDB builds a database with n tools, their vectors in the active profile's set and
// the HNSW index.
func benchDB(b testing.TB, n int) *pgxpool.Pool {
	b.Helper()
	ctx := context.Background()
	pool := pgtest.NewPool(b)
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	tools := benchCatalog(n, rng)
	exec(b, pool, `INSERT INTO sources (name, kind) VALUES ('bench', 'catalog')`)
	var src int64
	if err := pool.QueryRow(ctx, `SELECT id FROM sources WHERE name = 'bench'`).Scan(&src); err != nil {
		b.Fatal(err)
	}
	const batch = 5000
	t0 := time.Now()
	for i := 0; i < len(tools); i += batch {
		rows := [][]any{}
		for _, t := range tools[i:min(i+batch, len(tools))] {
			rows = append(rows, []any{src, "bench__" + t.name, t.name, t.desc, []byte(t.schema), "h"})
		}
		if _, err := pool.CopyFrom(ctx, pgx.Identifier{"tools"},
			[]string{"source_id", "name", "original_name", "description", "input_schema", "content_hash"},
			pgx.CopyFromRows(rows)); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("inserted %d tools (lexical index by the triggers) in %s", n, time.Since(t0).Round(time.Millisecond))
	var setID int64
	if err := pool.QueryRow(ctx, `INSERT INTO vector_sets (profile_id, state)
		SELECT id, 'ready' FROM weight_profiles WHERE name = 'default' RETURNING id`).Scan(&setID); err != nil {
		b.Fatal(err)
	}
	exec(b, pool, `UPDATE weight_profiles SET current_set = $1 WHERE name = 'default'`, setID)
	exec(b, pool, fmt.Sprintf(`ALTER TABLE tool_vectors ALTER COLUMN embedding TYPE vector(%d)`, benchDims))
	ids := map[string]int64{}
	r, err := pool.Query(ctx, `SELECT id, original_name FROM tools`)
	if err != nil {
		b.Fatal(err)
	}
	for r.Next() {
		var id int64
		var name string
		if err := r.Scan(&id, &name); err != nil {
			b.Fatal(err)
		}
		ids[name] = id
	}
	r.Close()
	rows := make([][]any, 0, len(tools))
	for _, t := range tools {
		rows = append(rows, []any{setID, ids[t.name], pgvector.NewVector(benchVector(strings.ReplaceAll(t.name, "_", " ") + " " + t.desc))})
	}
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"tool_vectors"}, []string{"set_id", "tool_id", "embedding"}, pgx.CopyFromRows(rows)); err != nil {
		b.Fatal(err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Release()
	for _, s := range []string{`SET maintenance_work_mem = '512MB'`,
		`CREATE INDEX tool_vectors_embedding_hnsw ON tool_vectors USING hnsw (embedding vector_cosine_ops)`,
		`VACUUM ANALYZE`} {
		if _, err := conn.Exec(ctx, s); err != nil {
			b.Fatalf("%s: %v", s, err)
		}
	}
	return pool
}

func benchQueries(rng *rand.Rand) []string {
	qs := []string{"get the data for the list", "list of items with the value", "get information for a record"}
	for i := 0; i < 60; i++ {
		switch i % 3 {
		case 0:
			qs = append(qs, fmt.Sprintf("what is the stock price of %s%s", syllables[rng.IntN(20)], syllables[rng.IntN(20)]))
		case 1:
			qs = append(qs, fmt.Sprintf("%s the %s of a %s", verbs[rng.IntN(10)], nouns[rng.IntN(400)], nouns[rng.IntN(400)]))
		default:
			qs = append(qs, fmt.Sprintf("dividend history and earnings per share %s", nouns[rng.IntN(400)]))
		}
	}
	return qs
}

// runConcurrent runs b.N calls of op from TOOLGATE_BENCH_CLIENTS clients (default 8) and
// reports latency percentiles and throughput.
func runConcurrent(b *testing.B, op func(i int) error) {
	clients := 8
	if s := os.Getenv("TOOLGATE_BENCH_CLIENTS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("TOOLGATE_BENCH_CLIENTS=%q: want a positive integer", s)
		}
		clients = n
	}
	lat := make([]time.Duration, b.N)
	var next int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	var firstErr error
	b.ResetTimer()
	start := time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := int(next)
				next++
				mu.Unlock()
				if i >= b.N {
					return
				}
				t0 := time.Now()
				if err := op(i); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
				lat[i] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
}

func BenchmarkSearch(b *testing.B) {
	sizes := []int{5000, 50000}
	if s := os.Getenv("TOOLGATE_BENCH_SIZES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				b.Fatalf("TOOLGATE_BENCH_SIZES: %v", err)
			}
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		t0 := time.Now()
		pool := benchDB(b, n)
		b.Logf("built %d tools in %s", n, time.Since(t0).Round(time.Second))
		setupOnce := func(*testing.B) *pgxpool.Pool { return pool }
		queries := benchQueries(rand.New(rand.NewPCG(7, 7)))
		b.Run(fmt.Sprintf("tools=%d/hybrid", n), func(b *testing.B) {
			s := search.New(setupOnce(b), benchEmbedder{}, search.DefaultSettings(), discard())
			runConcurrent(b, func(i int) error {
				_, err := s.Search(context.Background(), search.Request{Query: queries[i%len(queries)], K: 10})
				return err
			})
		})
		b.Run(fmt.Sprintf("tools=%d/hybrid-common-words", n), func(b *testing.B) {
			s := search.New(setupOnce(b), benchEmbedder{}, search.DefaultSettings(), discard())
			runConcurrent(b, func(i int) error {
				_, err := s.Search(context.Background(), search.Request{Query: queries[i%3], K: 10})
				return err
			})
		})
		b.Run(fmt.Sprintf("tools=%d/lexical", n), func(b *testing.B) {
			s := search.New(setupOnce(b), nil, search.DefaultSettings(), discard())
			runConcurrent(b, func(i int) error {
				_, err := s.Search(context.Background(), search.Request{Query: queries[i%len(queries)], K: 10, Mode: search.ModeLexical})
				return err
			})
		})
		b.Run(fmt.Sprintf("tools=%d/knn-floor", n), func(b *testing.B) {
			p := setupOnce(b)
			vecs := make([]pgvector.Vector, len(queries))
			for i, q := range queries {
				vecs[i] = pgvector.NewVector(benchVector(q))
			}
			runConcurrent(b, func(i int) error {
				rows, err := p.Query(context.Background(),
					`SELECT tool_id FROM tool_vectors WHERE set_id = (SELECT current_set FROM weight_profiles WHERE is_active)
					 ORDER BY embedding <=> $1 LIMIT 10`, vecs[i%len(vecs)])
				if err != nil {
					return err
				}
				rows.Close()
				return rows.Err()
			})
		})
	}
}
