package search_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/plan"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/search"
)

// near says whether a and b are equal up to the rounding of summing the same float8 terms
// in another order (the explanation sums a BM25 or the shares in its own statement).
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b)) }

// documentFields are the names SearchExplain gives the parts of a lexical document.
var documentFields = []string{"name", "title", "questions", "observed", "topics", "tags", "function",
	"description", "when_to_use", "parameters", "gloss", "expansion"}

// checkExplained checks that every explanation of resp is true to its ranking: the fused
// score is the result's and the sum of the branch shares, each branch is there exactly when
// it scored the tool (with the result's rank), the BM25 is the result's, similarities fall
// as vector ranks grow and equal the cosine of the query's and the tool's stored vectors
// (when embedder is given), and the terms are lexemes of the tool's intent's texts that its
// document holds, with the fields they come from.
func checkExplained(t *testing.T, pool *pgxpool.Pool, resp search.Response, embedder *hashEmbedder) {
	t.Helper()
	ctx := context.Background()
	x := resp.Explain
	if x == nil {
		t.Fatal("no explain in the response")
	}
	if x.Profile == "" || x.Plan != resp.Plan {
		t.Errorf("explain profile %q plan %v, response plan %v", x.Profile, x.Plan, resp.Plan)
	}
	textTerms := map[int][]string{} // intent → the lexemes of its texts
	for _, tx := range x.Texts {
		textTerms[tx.Intent] = append(textTerms[tx.Intent], tx.Terms...)
	}
	type ranked struct {
		rank int
		sim  float64
	}
	var byVector []ranked
	for _, r := range resp.Results {
		e := r.Explanation
		if e == nil {
			t.Errorf("%s: no explanation", r.Name)
			continue
		}
		var lexShare, vecShare float64
		if e.FusedScore != r.Score || e.NameMatch != r.NameMatch {
			t.Errorf("%s: explained score %v name match %v, result %v %v", r.Name, e.FusedScore, e.NameMatch, r.Score, r.NameMatch)
		}
		if (e.Lexical != nil) != (r.LexicalRank != nil) {
			t.Errorf("%s: lexical explanation %+v, lexical rank %v", r.Name, e.Lexical, r.LexicalRank)
		}
		intent := 0
		if r.Intent != nil {
			if e.Task == nil || e.Task.Text != resp.Plan.Intents[e.Task.Intent].Query {
				t.Errorf("%s: task %+v for plan %+v", r.Name, e.Task, resp.Plan)
			} else {
				intent = e.Task.Intent
			}
		} else if e.Task != nil {
			t.Errorf("%s: task %+v without a plan", r.Name, e.Task)
		}
		if l := e.Lexical; l != nil {
			lexShare = l.Share
			if r.LexicalRank == nil || l.Rank != *r.LexicalRank || !near(l.BM25, r.BM25) || l.BM25 <= 0 {
				t.Errorf("%s: explained lexical rank %d bm25 %v, result %v %v", r.Name, l.Rank, l.BM25, r.LexicalRank, r.BM25)
			}
			if len(l.Terms) == 0 {
				t.Errorf("%s: lexically ranked without a term", r.Name)
			}
			for _, term := range l.Terms {
				var inDoc bool
				if err := pool.QueryRow(ctx, `SELECT $2 = ANY (d.lexemes) FROM search_docs d JOIN tools t ON t.id = d.tool_id WHERE t.name = $1`,
					r.Name, term.Term).Scan(&inDoc); err != nil {
					t.Fatal(err)
				}
				if !inDoc || !slices.Contains(textTerms[intent], term.Term) || term.IDF <= 0 || term.TF <= 0 || len(term.Fields) == 0 {
					t.Errorf("%s: term %+v (in the document: %v, lexemes of the intent's texts %v)", r.Name, term, inDoc, textTerms[intent])
				}
				for _, f := range term.Fields {
					if !slices.Contains(documentFields, f) {
						t.Errorf("%s: term %q in unknown field %q", r.Name, term.Term, f)
					}
				}
			}
		}
		if v := e.Vector; v != nil {
			vecShare = v.Share
			if (v.Rank == nil) != (r.VectorRank == nil) || v.Rank != nil && *v.Rank != *r.VectorRank {
				t.Errorf("%s: explained vector rank %v, result %v", r.Name, v.Rank, r.VectorRank)
			}
			if v.Rank != nil {
				byVector = append(byVector, ranked{*v.Rank, v.Similarity})
			}
			if embedder != nil && r.Intent == nil {
				if want := cosine(t, pool, *embedder, resp.Explain.Texts[0].Text, r.Name); math.Abs(v.Similarity-want) > 1e-6 {
					t.Errorf("%s: similarity %v, cosine of the stored vectors %v", r.Name, v.Similarity, want)
				}
			}
		} else if r.VectorRank != nil {
			t.Errorf("%s: vector rank %d without a vector explanation", r.Name, *r.VectorRank)
		}
		var meaningShare float64
		if m := e.Meaning; m != nil {
			meaningShare = m.Share
			if m.Share <= 0 || x.Weights.Meaning <= 0 || m.Share > x.Weights.Meaning*float64(len(x.Texts))+1e-9 {
				t.Errorf("%s: meaning share %v with weight %v", r.Name, m.Share, x.Weights.Meaning)
			}
		}
		if !near(lexShare+vecShare+meaningShare, e.FusedScore) {
			t.Errorf("%s: shares %v + %v + %v, fused score %v", r.Name, lexShare, vecShare, meaningShare, e.FusedScore)
		}
	}
	if len(x.Texts) == 1 { // over several texts, a rank and a similarity may come from different ones
		slices.SortFunc(byVector, func(a, b ranked) int { return a.rank - b.rank })
		for i := 1; i < len(byVector); i++ {
			if byVector[i].sim > byVector[i-1].sim {
				t.Errorf("%q: vector rank %d has similarity %v, rank %d %v", x.Texts[0].Text, byVector[i].rank, byVector[i].sim, byVector[i-1].rank, byVector[i-1].sim)
			}
		}
	}
}

// cosine is the cosine similarity of the embedding of query and the vector of tool in the
// active profile's current set.
func cosine(t *testing.T, pool *pgxpool.Pool, e hashEmbedder, query, tool string) float64 {
	t.Helper()
	var v pgvector.Vector
	if err := pool.QueryRow(context.Background(), `SELECT tv.embedding FROM tool_vectors tv JOIN tools t ON t.id = tv.tool_id
		WHERE t.name = $1 AND tv.set_id = (SELECT current_set FROM weight_profiles WHERE is_active)`, tool).Scan(&v); err != nil {
		t.Fatal(err)
	}
	q, _ := e.Embed(context.Background(), []string{query})
	var dot, nq, nv float64
	for i, x := range v.Slice() {
		dot += float64(x) * float64(q[0][i])
		nq += float64(q[0][i]) * float64(q[0][i])
		nv += float64(x) * float64(x)
	}
	return dot / math.Sqrt(nq*nv)
}

func TestExplainIsTrueToTheRanking(t *testing.T) {
	t.Parallel()
	pool, _ := setup(t)
	ctx := context.Background()
	for _, fusion := range []search.Fusion{search.FusionMinMax, search.FusionDBSF, search.FusionRRF} {
		st := search.DefaultSettings()
		st.Fusion = fusion
		s := search.New(pool, testEmbedder, st, discard())
		for _, r := range []search.Request{
			{Query: "send an email message", K: 5},
			{Query: "latest stock price", K: 5},
			{Query: rainQuery, K: 3},
			{Query: "get_weather stock price", K: 4},
			{Query: "latest stock price", Queries: []string{"ticker symbol quote"}, K: 5},
			{Query: "latest stock price", K: 5, Mode: search.ModeLexical},
			{Query: rainQuery, K: 5, Mode: search.ModeVector},
		} {
			r.Explain = true
			resp := mustSearch(t, ctx, s, r)
			if len(resp.Results) == 0 {
				t.Fatalf("%s %q: no result", fusion, r.Query)
			}
			weights := search.BranchWeights{Lexical: 1.5, Vector: 1, Memory: search.DefaultWeightMemory}
			if r.Mode == search.ModeLexical {
				weights.Memory = 0 // no query vector: the memory branch did not run
			}
			if resp.Explain.Fusion != fusion || resp.Explain.Weights != weights || resp.Explain.Profile != "default" {
				t.Errorf("%s %q: explain %+v", fusion, r.Query, resp.Explain)
			}
			var e *hashEmbedder
			if len(r.Queries) == 0 {
				e = &testEmbedder // one text: the similarity is the cosine to the query's vector
			}
			checkExplained(t, pool, resp, e)
			for _, res := range resp.Results {
				switch {
				case r.Mode == search.ModeLexical && res.Explanation.Vector != nil:
					t.Errorf("%s lexical %q: %s has a vector explanation", fusion, r.Query, res.Name)
				case r.Mode == search.ModeVector && res.Explanation.Lexical != nil:
					t.Errorf("%s vector %q: %s has a lexical explanation", fusion, r.Query, res.Name)
				case fusion == search.FusionRRF && len(r.Queries) == 0 && res.LexicalRank != nil &&
					!near(res.Explanation.Lexical.Share, 1.5/(60+float64(*res.LexicalRank))):
					t.Errorf("rrf %q: %s lexical share %v at rank %d", r.Query, res.Name, res.Explanation.Lexical.Share, *res.LexicalRank)
				}
			}
		}
	}
}

// TestExplainTermsAndFields pins the terms of one tool: each query lexeme its document holds,
// with the fields it is in (name, description, parameters from the definition; questions and
// tags from enrichment).
func TestExplainTermsAndFields(t *testing.T) {
	t.Parallel()
	pool, _ := setup(t)
	resp := mustSearch(t, context.Background(), newService(pool),
		search.Request{Query: "ticker price trading finance", Mode: search.ModeLexical, K: 3, Explain: true})
	if len(resp.Results) == 0 || resp.Results[0].Name != "acme__get_stock_price" {
		t.Fatalf("got %v, want acme__get_stock_price first", names(resp))
	}
	got := map[string][]string{}
	for _, term := range resp.Results[0].Explanation.Lexical.Terms {
		got[term.Term] = term.Fields
	}
	want := map[string][]string{
		"ticker": {"description", "parameters"}, // "... for a ticker symbol"; the ticker parameter
		"price":  {"name", "description"},
		"trade":  {"questions"}, // "how much is Apple trading at"
		"financ": {"tags"},      // "finance, stocks"
	}
	if len(got) != len(want) {
		t.Errorf("terms %v, want %v", got, want)
	}
	for term, fields := range want {
		if !slices.Equal(got[term], fields) {
			t.Errorf("term %q in %v, want %v", term, got[term], fields)
		}
	}
	if x := resp.Explain; len(x.Texts) != 1 || x.Texts[0].Intent != 0 || x.Texts[0].Text != "ticker price trading finance" ||
		!slices.Equal(x.Texts[0].Terms, []string{"financ", "price", "ticker", "trade"}) || x.Plan != nil {
		t.Errorf("explain %+v", x)
	}
	checkExplained(t, pool, resp, nil)
}

// A word the tool's document holds only through the knowledge expansion (component
// expansion, field D) is explained as found in "expansion", like every other part of the
// document.
func TestExplainNamesTheExpansionField(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, ids := setup(t)
	if _, err := pool.Exec(ctx, `INSERT INTO tool_components (tool_id, kind, text, text_hash) VALUES ($1, 'expansion', 'psychoanalyst quote', 'h')`,
		ids["acme__get_stock_price"]); err != nil {
		t.Fatal(err)
	}
	flush(t, pool)
	resp := mustSearch(t, ctx, newService(pool), search.Request{Query: "psychoanalyst", Mode: search.ModeLexical, K: 1, Explain: true})
	if len(resp.Results) != 1 || resp.Results[0].Name != "acme__get_stock_price" {
		t.Fatalf("got %v, want acme__get_stock_price", names(resp))
	}
	terms := resp.Results[0].Explanation.Lexical.Terms
	if len(terms) != 1 || terms[0].Term != "psychoanalyst" || !slices.Equal(terms[0].Fields, []string{"expansion"}) {
		t.Errorf("terms %+v, want psychoanalyst in [expansion]", terms)
	}
	checkExplained(t, pool, resp, nil)
}

// TestExplainWithAPlan: with a plan each result's task is the intent whose ranking gave it its
// score, and the explanation holds for texts that serve several intents (the request, a
// variant of every task) and for variants.
func TestExplainWithAPlan(t *testing.T) {
	t.Parallel()
	pool, _ := setup(t)
	ctx := context.Background()
	s := newService(pool)
	for _, r := range []search.Request{
		{Query: "get the stock price and send an email message", K: 4},                           // the default plan: two tasks
		{Query: "get the stock price and send an email message", K: 4, Plan: plan.ModeFull},      // hybrid, explicit
		{Query: "get the stock price and send an email message", K: 4, Mode: search.ModeLexical}, // lexical
		{Query: "get the stock price and send an email message", K: 4, Mode: search.ModeVector},  // vector
	} {
		r.Explain = true
		resp := mustSearch(t, ctx, s, r)
		if resp.Plan == nil || len(resp.Plan.Intents) < 2 || len(resp.Results) == 0 {
			t.Fatalf("%+v: plan %+v, results %v: want a plan of several tasks", r, resp.Plan, names(resp))
		}
		checkExplained(t, pool, resp, nil)
		intents := map[int]bool{}
		for _, res := range resp.Results {
			intents[res.Explanation.Task.Intent] = true
		}
		if len(intents) < 2 {
			t.Errorf("%+v: every result explained by one task: %v", r, intents)
		}
		var texts []string
		for _, tx := range resp.Explain.Texts {
			texts = append(texts, tx.Text)
			if r.Mode != search.ModeVector && len(tx.Terms) == 0 {
				t.Errorf("%+v: text %q without terms", r, tx.Text)
			}
		}
		for i, in := range resp.Plan.Intents {
			if !slices.Contains(texts, in.Query) {
				t.Errorf("%+v: intent %d's query %q not among the texts %v", r, i, in.Query, texts)
			}
		}
	}
}

// statements records the names of the sqlc statements a pool runs, batches included, and
// counts the round trips: a statement sent alone, or a batch.
type statements struct {
	mu    sync.Mutex
	names []string
	trips int
}

func (s *statements) trip() {
	s.mu.Lock()
	s.trips++
	s.mu.Unlock()
}

// takeTrips returns the round trips since the last call.
func (s *statements) takeTrips() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.trips
	s.trips = 0
	return n
}

func (s *statements) record(sql string) {
	if name, ok := strings.CutPrefix(sql, "-- name: "); ok {
		name, _, _ = strings.Cut(name, " ")
		s.mu.Lock()
		s.names = append(s.names, name)
		s.mu.Unlock()
	}
}

func (s *statements) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.names
	s.names = nil
	return out
}

func (s *statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	s.trip()
	s.record(d.SQL)
	return ctx
}
func (s *statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (s *statements) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	s.trip()
	return ctx
}
func (s *statements) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	s.record(d.SQL)
}
func (s *statements) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// TestExplainOnlyWhenAsked: a search that does not ask runs the statements it always ran and
// answers without a trace of explanations; one that asks runs one statement more.
func TestExplainOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDB(t)
	filling, err := postgres.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	fill(t, filling)
	filling.Close()
	var seen statements
	pool, err := postgres.Connect(ctx, url, postgres.WithQueryTracer(&seen))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s := search.New(pool, testEmbedder, search.DefaultSettings(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, r := range []search.Request{
		{Query: "send an email message", K: 3},
		{Query: "get the stock price and send an email message", K: 3}, // planned: merged in Go
		{Query: "no such words anywhere", K: 3, Mode: search.ModeLexical},
	} {
		resp := mustSearch(t, ctx, s, r)
		plain := seen.take()
		body, err := json.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(body), `"explanation"`) || strings.Contains(string(body), `"explain"`) || slices.Contains(plain, "SearchExplain") {
			t.Errorf("%q without explain: statements %v, answer %s", r.Query, plain, body)
		}
		r.Explain = true
		resp = mustSearch(t, ctx, s, r)
		explained := seen.take()
		// explained after the ranking, before the log row
		logAt := slices.Index(plain, "SearchLogAsync")
		if want := slices.Concat(plain[:logAt], []string{"SearchSetConfig", "SearchExplain"}, plain[logAt:]); logAt < 0 || !slices.Equal(explained, want) {
			t.Errorf("%q with explain: statements %v, want %v", r.Query, explained, want)
		}
		if resp.Explain == nil || len(resp.Explain.Texts) == 0 {
			t.Errorf("%q with explain: %+v", r.Query, resp.Explain)
		}
		checkExplained(t, pool, resp, nil)
	}
}

// TestSearchRoundTrips: a search, plain or planned (its intents' rankings merged in Go), is
// two round trips, neither inside an explicit transaction: the settings and the read-only
// statement, then the log row, written once with the list the search answered.
func TestSearchRoundTrips(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDB(t)
	filling, err := postgres.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	fill(t, filling)
	filling.Close()
	var seen statements
	pool, err := postgres.Connect(ctx, url, postgres.WithQueryTracer(&seen))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s := search.New(pool, testEmbedder, search.DefaultSettings(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	mustSearch(t, ctx, s, search.Request{Query: "warm up", K: 3}) // pgx describes new statements once
	seen.takeTrips()
	seen.take()
	want := []string{"SearchSetConfig", "Search", "SearchLogAsync", "InsertSearchLogs"}
	for _, c := range []struct {
		query   string
		planned bool
	}{
		{"send an email message", false},
		{"get the stock price and send an email message", true},
		{"get the stock price and send an email message", true}, // again: nothing left open
	} {
		resp := mustSearch(t, ctx, s, search.Request{Query: c.query, K: 3})
		if got, names := seen.takeTrips(), seen.take(); got != 2 || !slices.Equal(names, want) || (resp.Plan != nil) != c.planned {
			t.Errorf("%q: %d round trips %v (planned: %v), want 2 %v (planned: %v)", c.query, got, names, resp.Plan != nil, want, c.planned)
		}
		var logged []string
		var rows int
		if err := pool.QueryRow(ctx, `SELECT ARRAY(SELECT e->>'name' FROM jsonb_array_elements(results) e),
			(SELECT count(*) FROM search_log x WHERE x.id = l.id) FROM search_log l WHERE id = $1`,
			resp.SearchID).Scan(&logged, &rows); err != nil {
			t.Fatal(err)
		}
		seen.takeTrips()
		seen.take()
		var answered []string
		for _, r := range resp.Results {
			answered = append(answered, r.Name)
		}
		if !slices.Equal(logged, answered) || len(answered) == 0 || rows != 1 {
			t.Errorf("%q: logged %v (%d rows), answered %v", c.query, logged, rows, answered)
		}
	}
}

// TestLogFailureFailsTheSearch: a search whose log row cannot be written is not answered
// (search_log holds one row per answered search), and leaves nothing open on its
// connection: once the row can be written again, the next search on it works.
func TestLogFailureFailsTheSearch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDB(t)
	pool, err := postgres.Connect(ctx, url, postgres.WithMaxConns(1))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	fill(t, pool)
	// Raw DDL: a test-only trigger that makes every write of a log row fail.
	if _, err := pool.Exec(ctx, `
		CREATE FUNCTION refuse_log() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'no log'; END $$;
		CREATE TRIGGER refuse_log BEFORE INSERT ON search_log FOR EACH ROW EXECUTE FUNCTION refuse_log()`); err != nil {
		t.Fatal(err)
	}
	s := search.New(pool, testEmbedder, search.DefaultSettings(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, q := range []string{"send an email message", "get the stock price and send an email message"} {
		if _, err := s.Search(ctx, search.Internal(), search.Request{Query: q, K: 3}); err == nil || !strings.Contains(err.Error(), "no log") {
			t.Fatalf("%q with a failing log write: error %v", q, err)
		}
	}
	if _, err := pool.Exec(ctx, `DROP TRIGGER refuse_log ON search_log`); err != nil {
		t.Fatal(err)
	}
	resp := mustSearch(t, ctx, s, search.Request{Query: "send an email message", K: 3})
	var rows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM search_log`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 1 || len(resp.Results) == 0 {
		t.Errorf("log rows %d, want only the answered search's; results %+v", rows, resp.Results)
	}
}
