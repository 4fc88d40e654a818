package search_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/auth"
	tgcatalog "github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/jobs"
)

// corpus is the lexical index recomputed in Go from the tools' documents alone.
type corpus struct {
	tf     map[int64]map[string]float64 // tool -> lexeme -> weighted term frequency
	dl     map[int64]float64
	df     map[string]int
	total  float64
	source map[int64]string // tool -> its source's name
}

// only is the corpus of the tools of the given sources alone: what a caller restricted to
// them is scored with.
func (c corpus) only(sources []string) corpus {
	out := corpus{tf: map[int64]map[string]float64{}, dl: map[int64]float64{}, df: map[string]int{}, source: map[int64]string{}}
	for id, src := range c.source {
		if !slices.Contains(sources, src) {
			continue
		}
		out.tf[id], out.dl[id], out.source[id] = c.tf[id], c.dl[id], src
		out.total += c.dl[id]
		for lexeme := range c.tf[id] {
			out.df[lexeme]++
		}
	}
	return out
}

// readCorpus reads every searchable tool's document through toolgate_search_document
// (sql/functions/lexical.sql), the function the indexer writes search_docs with, so the
// reference has the product's definition of a document (its fields, component kinds and
// weights) and cannot drift from it. It is computed now from the tools and components, not
// read from the index's rows: what the reference checks is the rest, the index's document
// frequencies, corpus totals, impacts and candidates, and the BM25 scoring of the search.
func readCorpus(t *testing.T, pool *pgxpool.Pool) corpus {
	t.Helper()
	rows, err := pool.Query(context.Background(),
		`SELECT d.tool_id, s.name, d.lexemes, d.tfs
		 FROM toolgate_search_document(ARRAY(SELECT id FROM tools)) d JOIN sources s ON s.id = d.source_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	c := corpus{tf: map[int64]map[string]float64{}, dl: map[int64]float64{}, df: map[string]int{}, source: map[int64]string{}}
	for rows.Next() {
		var id int64
		var src string
		var lexemes []string
		var tfs []float32
		if err := rows.Scan(&id, &src, &lexemes, &tfs); err != nil {
			t.Fatal(err)
		}
		c.source[id] = src
		c.tf[id] = map[string]float64{}
		c.dl[id] = 0 // a document without lexemes still counts in N
		for i, lexeme := range lexemes {
			tf := float64(tfs[i])
			c.tf[id][lexeme] = tf
			c.dl[id] += tf
			c.df[lexeme]++
			c.total += tf
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return c
}

// bm25 is the textbook Okapi BM25 of tool id for terms, k1 1.2 and b 0.75: the reference the
// search's formulas (sql/functions/bm25.sql) are held to.
func (c corpus) bm25(id int64, terms []string) float64 {
	const k1, b = 1.2, 0.75
	n := float64(len(c.dl))
	avgdl := c.total / n
	var s float64
	for _, q := range terms {
		tf, ok := c.tf[id][q]
		if !ok {
			continue
		}
		df := float64(c.df[q])
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		s += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*c.dl[id]/avgdl))
	}
	return s
}

func TestBM25MatchesReference(t *testing.T) {
	t.Parallel()
	pool, _ := setup(t)
	queries := []string{"latest stock price", "currency amount convert", "email a customer an invoice", "news about the company", "ticker symbol"}
	checkBM25(t, pool, search.DefaultSettings(), queries)
	checkBM25(t, pool, search.Settings{KRRF: 60, WeightLexical: 1, WeightVector: 1, EfSearch: 40, Candidates: 50, Postings: 200}, queries)
}

// A search key restricted to some sources is scored with their statistics alone: N, the
// average length and the document frequencies of its sources' tools, never another
// source's (docs/auth.md#search-statistics). Its ranking and every BM25 score equal the
// reference over its sources' documents; a key allowed every source scores as an
// unrestricted caller does, and a key allowed none finds nothing.
func TestBM25MatchesReferenceForRestrictedKeys(t *testing.T) {
	t.Parallel()
	pool, _ := setup(t)
	queries := []string{"latest stock price", "currency amount convert", "email a customer an invoice", "news about the company", "weather forecast"}
	for _, sources := range [][]string{{"acme"}, {"beta"}, {"acme", "beta"}, {"beta", "no_such_source"}, {}} {
		checkBM25For(t, pool, search.DefaultSettings(), sources, queries)
	}
}

// The queries observed for a tool (internal/observed) are part of its document, in field B:
// the reference reads them as the indexer does, and the search finds the tool by them with the
// reference's score.
func TestBM25ReferenceIncludesObservedQueries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, ids := setup(t)
	id := ids["beta__get_weather"]
	svc := &enrich.Service{Pool: pool, Embedder: testEmbedder}
	if _, err := svc.SetObserved(ctx, id, []string{"zeppelin airship forecast"}); err != nil {
		t.Fatal(err)
	}
	flush(t, pool)
	c := readCorpus(t, pool)
	// "forecast" is in the description too (field C, weight 1)
	for lexeme, want := range map[string]float64{"zeppelin": 2, "airship": 2, "forecast": 3} {
		if got := c.tf[id][lexeme]; got != want {
			t.Errorf("reference tf of %q in get_weather = %v, want %v (observed queries weigh as field B)", lexeme, got, want)
		}
	}
	checkBM25(t, pool, search.DefaultSettings(), []string{"zeppelin", "airship forecast"})
	resp := mustSearch(t, ctx, search.New(pool, testEmbedder, search.DefaultSettings(), discard()),
		search.Request{Query: "zeppelin", Mode: search.ModeLexical, K: 5})
	if len(resp.Results) != 1 || resp.Results[0].Name != "beta__get_weather" {
		t.Fatalf("lexical search for an observed word: %+v, want beta__get_weather alone", resp.Results)
	}
}

// checkBM25 runs each query in lexical mode with k = 100 and compares the ranking and every
// BM25 score with the Go reference over the tools' documents.
func checkBM25(t *testing.T, pool *pgxpool.Pool, settings search.Settings, queries []string) {
	t.Helper()
	checkBM25For(t, pool, settings, nil, queries)
}

// checkBM25For is checkBM25 for a search key restricted to sources (nil: an unrestricted
// caller), whose reference is the corpus of those sources' tools alone: its N, average
// length and document frequencies, and its tools only.
func checkBM25For(t *testing.T, pool *pgxpool.Pool, settings search.Settings, sources []string, queries []string) {
	t.Helper()
	ctx := context.Background()
	if sources != nil {
		ctx = auth.WithCaller(ctx, &auth.Caller{Name: "tenant", KeyID: 7, Scope: auth.ScopeSearch, Sources: sources})
	}
	names := map[int64]string{}
	rows, err := pool.Query(ctx, `SELECT id, name FROM tools`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			t.Fatal(err)
		}
		names[id] = name
	}
	rows.Close()
	c := readCorpus(t, pool)
	if sources != nil {
		c = c.only(sources)
	}
	s := search.New(pool, testEmbedder, settings, discard())
	for _, q := range queries {
		var terms []string
		if err := pool.QueryRow(ctx, `SELECT coalesce(array_agg(lexeme), '{}') FROM toolgate_query_lexemes($1) AS u (lexeme)`, q).Scan(&terms); err != nil {
			t.Fatal(err)
		}
		type scored struct {
			id    int64
			score float64
		}
		var want []scored
		for id := range c.dl {
			if sc := c.bm25(id, terms); sc > 0 {
				want = append(want, scored{id, sc})
			}
		}
		sort.Slice(want, func(i, j int) bool {
			if want[i].score != want[j].score {
				return want[i].score > want[j].score
			}
			return want[i].id < want[j].id
		})
		resp := mustSearch(t, ctx, s, search.Request{Query: q, Mode: search.ModeLexical, K: 100})
		if len(resp.Results) != min(len(want), 100) {
			t.Fatalf("%q (sources %v): %d results, reference %d", q, sources, len(resp.Results), len(want))
		}
		for i, r := range resp.Results {
			if r.Name != names[want[i].id] || math.Abs(r.BM25-want[i].score) > 1e-4*want[i].score {
				t.Errorf("%q (sources %v) #%d: got %s %.6f, reference %s %.6f", q, sources, i+1,
					r.Name, r.BM25, names[want[i].id], want[i].score)
			}
			if r.LexicalRank == nil || *r.LexicalRank != i+1 {
				t.Errorf("%q (sources %v) #%d: lexical rank %v", q, sources, i+1, r.LexicalRank)
			}
		}
	}
}

// Through the write paths users take (imports, a source deleted, re-imports), with no manual
// refresh, every BM25 score stays equal to the Go reference: the document frequencies and the
// corpus totals are exact after each step, and once the documents grew enough for the
// average length to drift, the indexer has recomputed every impact.
func TestBM25MatchesReferenceAfterBulkChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: discard()}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fin := dataset.Tools(dataset.DemoCompanies[:30])
	generic := make([]tgcatalog.Tool, 40)
	for i := range generic {
		generic[i] = tgcatalog.Tool{Name: fmt.Sprintf("convert_%d", i), Description: fmt.Sprintf("Convert a currency amount, variant %d", i),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number","description":"Amount of money"}}}`)}
	}
	// exhaustive: every posting fetched, every candidate scored
	st := search.Settings{KRRF: 60, WeightLexical: 1, WeightVector: 1, EfSearch: 40,
		Candidates: 100, Postings: 10000, LexicalTerms: 100}
	queries := []string{"stock price", "revenue of the company", "dividend history", "convert currency amount", "analyst price targets"}
	importCatalog := func(source string, tools []tgcatalog.Tool) {
		t.Helper()
		if _, _, err := sources.Import(ctx, pool, jobs.NewQueue(rc), source, tools); err != nil {
			t.Fatal(err)
		}
	}
	// the BM25 of a key restricted to each source, with its statistics alone, follows too
	check := func() {
		t.Helper()
		checkBM25(t, pool, st, queries)
		checkBM25For(t, pool, st, []string{"fin"}, queries)
		checkBM25For(t, pool, st, []string{"generic"}, queries)
	}
	importCatalog("fin", fin)
	importCatalog("generic", generic)
	check()
	var firstAvg float64
	if err := pool.QueryRow(ctx, `SELECT impact_avgdl FROM search_corpus`).Scan(&firstAvg); err != nil {
		t.Fatal(err)
	}

	// half the financial tools go, a third of the rest get descriptions four times longer
	var changed []tgcatalog.Tool
	for i, tl := range fin {
		if i%2 == 0 {
			continue
		}
		if i%3 == 0 {
			tl.Description = strings.Repeat(tl.Description+" ", 4)
		}
		changed = append(changed, tl)
	}
	importCatalog("fin", changed)
	check()

	if _, err := db.New(pool).DeleteSource(ctx, "generic"); err != nil {
		t.Fatal(err)
	}
	flush(t, pool)
	check()
	importCatalog("generic", generic[:25])
	importCatalog("fin", fin)
	check()

	// an import leaves recomputing the impacts to the lexical_index job's flush
	flush(t, pool)
	var docs int64
	var total, impactAvg float64
	if err := pool.QueryRow(ctx, `SELECT docs, total_len, impact_avgdl FROM search_corpus`).Scan(&docs, &total, &impactAvg); err != nil {
		t.Fatal(err)
	}
	if avg := total / float64(docs); math.Abs(avg-impactAvg) > lexical.Drift*impactAvg || impactAvg == firstAvg {
		t.Errorf("impacts computed with average length %.2f (first %.2f), the average is %.2f", impactAvg, firstAvg, avg)
	}
}

// The candidate bound: with Postings = 1 each query term contributes only its best posting.
func TestPostingsBound(t *testing.T) {
	t.Parallel()
	pool, _ := setup(t)
	st := search.DefaultSettings()
	st.Postings = 1
	s := search.New(pool, testEmbedder, st, discard())
	resp := mustSearch(t, context.Background(), s, search.Request{Query: "stock", Mode: search.ModeLexical, K: 10})
	if len(resp.Results) != 1 {
		t.Errorf("postings bound 1, one term: got %v", names(resp))
	}
}

// snapshot is the lexical index as rows, for comparing an incrementally maintained index
// with a full rebuild.
func snapshot(t *testing.T, pool *pgxpool.Pool) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, q := range map[string]string{
		"docs":           `SELECT coalesce(string_agg(format('%s|%s|%s|%s|%s|%s|%s', tool_id, source_id, lexemes, tfs, doc_len, tags, name_keys), E'\n' ORDER BY tool_id), '') FROM search_docs`,
		"postings":       `SELECT coalesce(string_agg(format('%s|%s|%s', lexeme, tool_id, source_id), E'\n' ORDER BY lexeme, tool_id), '') FROM search_postings`,
		"lexemes":        `SELECT coalesce(string_agg(format('%s|%s', lexeme, df), E'\n' ORDER BY lexeme), '') FROM search_lexemes`,
		"corpus":         `SELECT format('%s|%s', docs, total_len) FROM search_corpus`,
		"source_lexemes": `SELECT coalesce(string_agg(format('%s|%s|%s', lexeme, source_id, df), E'\n' ORDER BY lexeme, source_id), '') FROM search_source_lexemes`,
		"source_corpus":  `SELECT coalesce(string_agg(format('%s|%s|%s', source_id, docs, total_len), E'\n' ORDER BY source_id), '') FROM search_source_corpus`,
		"visible":        `SELECT coalesce(string_agg(id::text, ',' ORDER BY id), '') FROM tools WHERE enabled AND review_state = 'approved'`,
		"indexed":        `SELECT coalesce(string_agg(tool_id::text, ',' ORDER BY tool_id), '') FROM search_docs`,
	} {
		var s string
		if err := pool.QueryRow(context.Background(), q).Scan(&s); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = s
	}
	return out
}

// rebuild builds the lexical index from nothing: every tool queued into an empty index.
func rebuild(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	exec(t, pool, `TRUNCATE search_docs, search_postings, search_lexemes, search_source_lexemes, search_source_corpus, search_queue`)
	exec(t, pool, `UPDATE search_corpus SET docs = 0, total_len = 0, impact_avgdl = 0`)
	exec(t, pool, `INSERT INTO search_queue (tool_id) SELECT id FROM tools`)
	flush(t, pool)
}

func TestLexicalIndexFollowsChanges(t *testing.T) {
	t.Parallel()
	pool, _ := setup(t)
	steps := []string{
		`UPDATE tools SET description = 'Quote of a share on the stock market' WHERE name = 'acme__get_stock_price'`,
		`UPDATE tools SET enabled = false WHERE name = 'beta__get_weather'`,
		`UPDATE tools SET review_state = 'approved' WHERE name = 'acme__pending_price'`,
		`UPDATE tools SET review_state = 'pending' WHERE name = 'acme__stock_news'`,
		`DELETE FROM tools WHERE name = 'acme__sendEmail'`,
		`UPDATE tool_components SET text = 'what does a share of Tesla cost' WHERE kind = 'question'`,
		`DELETE FROM tool_components WHERE kind = 'profile_tags' AND text = 'billing'`,
		`INSERT INTO tool_components (tool_id, kind, ordinal, text, text_hash)
		   SELECT id, 'topics', 0, 'forex currencies money', 'h' FROM tools WHERE name = 'acme__get_exchange_rate'`,
		`INSERT INTO tools (source_id, name, original_name, description, input_schema, content_hash)
		   SELECT id, 'beta__list_' || g, 'list_' || g, 'List the data items number ' || g, '{"type":"object"}', 'h'
		   FROM sources, generate_series(1, 20) g WHERE name = 'beta'`,
		`UPDATE tools SET description = description || ' again' WHERE name LIKE 'beta__list_%'`,
		`UPDATE tools SET enabled = true WHERE name = 'beta__get_weather'`,
		`UPDATE tools SET updated_at = now()`, // no searchable field changed
		`DELETE FROM sources WHERE name = 'beta'`,
	}
	for _, step := range steps {
		exec(t, pool, step)
		flush(t, pool)
		got := snapshot(t, pool)
		if got["visible"] != got["indexed"] {
			t.Fatalf("after %q: indexed tools %s, searchable tools %s", step, got["indexed"], got["visible"])
		}
		rebuild(t, pool)
		want := snapshot(t, pool)
		for k := range want {
			if got[k] != want[k] {
				t.Fatalf("after %q: %s differs from a full rebuild:\n%s\nwant\n%s", step, k, got[k], want[k])
			}
		}
		// and the statistics agree with a recomputation from the documents
		c := readCorpus(t, pool)
		var docs int
		var total float64
		if err := pool.QueryRow(context.Background(), `SELECT docs, total_len FROM search_corpus`).Scan(&docs, &total); err != nil {
			t.Fatal(err)
		}
		if docs != len(c.dl) || math.Abs(total-c.total) > 1e-6 {
			t.Fatalf("after %q: corpus %d/%v, recomputed %d/%v", step, docs, total, len(c.dl), c.total)
		}
	}
	// the changed question is searchable, the old one is not
	s := newService(pool)
	resp := mustSearch(t, context.Background(), s, search.Request{Query: "tesla", Mode: search.ModeLexical})
	if got := names(resp); len(got) != 1 || got[0] != "acme__get_stock_price" {
		t.Errorf("tesla: %v", got)
	}
	resp = mustSearch(t, context.Background(), s, search.Request{Query: "apple trading", Mode: search.ModeLexical})
	if len(resp.Results) != 0 {
		t.Errorf("old question still found: %v", names(resp))
	}
}

// Concurrent writers of tools and components, with two indexers flushing all the while, never deadlock and leave the index equal to a full rebuild.
func TestLexicalIndexConcurrentWriters(t *testing.T) {
	t.Parallel()
	pool, ids := setup(t)
	var toolIDs []int64
	for _, id := range ids {
		toolIDs = append(toolIDs, id)
	}
	ctx := context.Background()
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		go func() {
			var err error
			for i := 0; i < 15 && err == nil; i++ {
				a, b := toolIDs[(w+i)%len(toolIDs)], toolIDs[(w*3+i+1)%len(toolIDs)]
				err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
					if _, err := tx.Exec(ctx, `UPDATE tools SET description = description || ' w' || $2::int WHERE id = $1`, a, w); err != nil {
						return err
					}
					_, err := tx.Exec(ctx, `INSERT INTO tool_components (tool_id, kind, ordinal, text, text_hash)
						VALUES ($1, 'topics', $2, 'topic ' || $3::int, 'h')
						ON CONFLICT (tool_id, kind, ordinal) DO UPDATE SET text = EXCLUDED.text`, b, w, i)
					return err
				})
			}
			errs <- err
		}()
	}
	stop := make(chan struct{})
	flushed := make(chan error, 2)
	for range 2 {
		go func() {
			for {
				select {
				case <-stop:
					flushed <- nil
					return
				default:
				}
				if _, err := lexical.Flush(ctx, pool); err != nil {
					flushed <- err
					return
				}
			}
		}()
	}
	for w := 0; w < 8; w++ {
		if err := <-errs; err != nil {
			t.Fatalf("writer: %v", err)
		}
	}
	close(stop)
	for i := 0; i < 2; i++ {
		if err := <-flushed; err != nil {
			t.Fatalf("indexer: %v", err)
		}
	}
	flush(t, pool)
	got := snapshot(t, pool)
	rebuild(t, pool)
	want := snapshot(t, pool)
	for k := range want {
		if got[k] != want[k] {
			t.Errorf("%s differs from a full rebuild after concurrent writes", k)
		}
	}
}

// The term budget: past the LexicalTerms rarest terms, further terms choose candidates while
// the postings fetched so far (min(df, Postings) per term, from the rarest) stay within
// LexicalTerms × Postings. Three terms of one document each, two chosen by rarity: the
// third (alphabetically last of equal df) chooses its tool when the budget has room for it
// (Postings 2: 3 ≤ 4) and not when it does not (Postings 1: 3 > 2).
func TestLexicalTermBudget(t *testing.T) {
	t.Parallel()
	pool, _ := setup(t)
	ctx := context.Background()
	for name, desc := range map[string]string{"first": "Xylofrob report", "second": "Quagmirex report", "third": "Zentrovia report"} {
		exec(t, pool, `INSERT INTO tools (source_id, name, original_name, description, input_schema, content_hash)
			SELECT id, 'beta__' || $1, $1, $2, '{"type":"object"}', 'h' FROM sources WHERE name = 'beta'`, name, desc)
	}
	flush(t, pool)
	for _, c := range []struct {
		postings int
		third    bool
	}{{2, true}, {1, false}} {
		st := search.DefaultSettings()
		st.LexicalTerms, st.Postings = 2, c.postings
		s := search.New(pool, testEmbedder, st, discard())
		got := names(mustSearch(t, ctx, s, search.Request{Query: "xylofrob quagmirex zentrovia", Mode: search.ModeLexical, K: 10}))
		if !contains(got, "beta__first") || !contains(got, "beta__second") || contains(got, "beta__third") != c.third {
			t.Errorf("lexical_terms 2, postings %d: %v, want the first two and the third %v", c.postings, got, c.third)
		}
	}
}
