// Package searchbench builds the synthetic catalogs the search benchmarks run against
// (go test -bench BenchmarkSearch in internal/search, toolgate bench search and bench load):
// half ScaleMCP-style company tools (five per synthetic company: get_{company}_{function}),
// half generic tools made of common verbs and a few hundred nouns, embedded by a hashing
// bag-of-words embedder (Dims dimensions), so that vectors cluster like their texts do.
package searchbench

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/lexical"
)

// Dims is the dimension of the benchmark vectors.
const Dims = 256

// Embedder embeds texts with Vector; it implements embed.Embedder without a model.
type Embedder struct{}

func (Embedder) Model() string { return "bench-hash" }
func (Embedder) Dims() int     { return Dims }
func (Embedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = Vector(t)
	}
	return out, nil
}

// Vector hashes each word of text into a signed bucket; texts sharing words are close.
func Vector(text string) []float32 {
	v := make([]float32, Dims)
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
		v[s%Dims] += sign
		v[(s>>20)%Dims] += sign * 0.5
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

// Tool is one synthetic tool.
type Tool struct{ Name, Description, Schema string }

// Catalog returns n synthetic tools; the same rng seed gives the same catalog.
func Catalog(n int, rng *rand.Rand) []Tool {
	out := make([]Tool, 0, n)
	for c := 0; len(out) < n/2; c++ {
		company := dataset.Company{Name: fmt.Sprintf("%s%s%s %s", strings.ToUpper(syllables[c%20][:1])+syllables[c%20][1:],
			syllables[(c/20)%20], syllables[(c/400)%20], suffixes[(c/8000+c)%10]) + " " + strconv.Itoa(c)}
		for _, t := range dataset.Tools([]dataset.Company{company}) {
			out = append(out, Tool{t.Name, t.Description, string(t.InputSchema)})
		}
	}
	for i := 0; len(out) < n; i++ {
		v, a, b := verbs[rng.IntN(len(verbs))], nouns[rng.IntN(len(nouns))], nouns[rng.IntN(len(nouns))]
		var desc []string
		desc = append(desc, strings.ToUpper(v[:1])+v[1:], "the", a, "of", "a", b)
		for j := 0; j < 6+rng.IntN(10); j++ {
			if rng.IntN(2) == 0 {
				desc = append(desc, common[rng.IntN(len(common))])
			} else {
				desc = append(desc, nouns[rng.IntN(len(nouns))])
			}
		}
		out = append(out, Tool{fmt.Sprintf("%s_%s_%s_%d", v, a, b, i), strings.Join(desc, " ") + ".",
			fmt.Sprintf(`{"type":"object","properties":{"%s_id":{"type":"string","description":"Identifier of the %s"}}}`, a, a)})
	}
	return out
}

// Build fills pool's migrated, empty database with n tools of source "bench", their
// vectors in the default profile's current set and the HNSW index. logf reports progress.
func Build(ctx context.Context, pool *pgxpool.Pool, n int, logf func(format string, args ...any)) error {
	tools := Catalog(n, rand.New(rand.NewPCG(1, uint64(n))))
	var src int64
	if err := pool.QueryRow(ctx, `INSERT INTO sources (name, kind) VALUES ('bench', 'catalog') RETURNING id`).Scan(&src); err != nil {
		return err
	}
	const batch = 5000
	for i := 0; i < len(tools); i += batch {
		rows := [][]any{}
		for _, t := range tools[i:min(i+batch, len(tools))] {
			rows = append(rows, []any{src, "bench__" + t.Name, t.Name, t.Description, []byte(t.Schema), "h"})
		}
		if _, err := pool.CopyFrom(ctx, pgx.Identifier{"tools"},
			[]string{"source_id", "name", "original_name", "description", "input_schema", "content_hash"},
			pgx.CopyFromRows(rows)); err != nil {
			return err
		}
	}
	st, err := lexical.Flush(ctx, pool)
	if err != nil {
		return err
	}
	logf("inserted %d tools, lexical index built (%d tools)", n, st.Indexed)
	q := db.New(pool)
	profile, err := q.GetProfileByName(ctx, "default")
	if err != nil {
		return err
	}
	setID, err := q.CreateVectorSet(ctx, db.CreateVectorSetParams{ProfileID: profile.ID, State: db.VectorSetReady})
	if err != nil {
		return err
	}
	// Raw DDL: the benchmark's vectors have their own dimension.
	for _, s := range []string{
		fmt.Sprintf(`UPDATE weight_profiles SET current_set = %d WHERE name = 'default'`, setID),
		fmt.Sprintf(`ALTER TABLE tool_vectors ALTER COLUMN embedding TYPE vector(%d)`, Dims),
	} {
		if _, err := pool.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	ids := map[string]int64{}
	r, err := pool.Query(ctx, `SELECT id, original_name FROM tools`)
	if err != nil {
		return err
	}
	for r.Next() {
		var id int64
		var name string
		if err := r.Scan(&id, &name); err != nil {
			r.Close()
			return err
		}
		ids[name] = id
	}
	r.Close()
	if err := r.Err(); err != nil {
		return err
	}
	rows := make([][]any, 0, len(tools))
	for _, t := range tools {
		rows = append(rows, []any{setID, ids[t.Name], pgvector.NewVector(Vector(strings.ReplaceAll(t.Name, "_", " ") + " " + t.Description))})
	}
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"tool_vectors"}, []string{"set_id", "tool_id", "embedding"}, pgx.CopyFromRows(rows)); err != nil {
		return err
	}
	logf("inserted %d vectors; building the HNSW index", n)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	for _, s := range []string{`SET maintenance_work_mem = '512MB'`,
		`CREATE INDEX tool_vectors_embedding_hnsw ON tool_vectors USING hnsw (embedding vector_cosine_ops)`,
		`VACUUM ANALYZE`} {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// Queries returns the benchmark's queries: three of very common words first (the
// lexical worst case), then company, generic and financial questions.
func Queries(rng *rand.Rand) []string {
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

// KNNFloor is the bare pgvector query on the active set: the floor under any vector search.
const KNNFloor = `SELECT tool_id FROM tool_vectors WHERE set_id = (SELECT current_set FROM weight_profiles WHERE is_active)
ORDER BY embedding <=> $1 LIMIT 10`

// LongQueries returns 60 multi-step requests of 40 to 80 words, as agents send them: three
// to five tasks, each a benchmark-style question wrapped in conversational words, joined by
// cue words. The lexical branch's cost must not grow with their length.
func LongQueries(rng *rand.Rand) []string {
	short := Queries(rng)
	openers := []string{"I need you to help me with a few things today.", "Please do the following for me, in order.",
		"For the report I am preparing for the board meeting next week, I have some requests."}
	cues := []string{"First,", "After that,", "Then", "Also,", "Finally,", "Once that is done,"}
	tails := []string{"and please make sure the answer is accurate and up to date.",
		"and tell me if anything looks unusual compared to last year.",
		"so that I can compare it with what we had before."}
	var out []string
	for len(out) < 60 {
		words := strings.Fields(openers[rng.IntN(len(openers))])
		for len(words) < 40+rng.IntN(40) {
			words = append(words, cues[rng.IntN(len(cues))])
			words = append(words, strings.Fields(short[3+rng.IntN(len(short)-3)])...)
			words = append(words, strings.Fields(tails[rng.IntN(len(tails))])...)
		}
		out = append(out, strings.Join(words[:min(len(words), 80)], " "))
	}
	return out
}
