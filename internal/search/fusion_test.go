package search_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/search"
)

// fusionQuery has no word of the hand-made catalog; its vector is dimension 10.
const fusionQuery = "quarterly dividend schedule"

// betaToolAdder returns a function adding a tool to the setup catalog's source beta with a
// fixed vector in the default profile's set.
func betaToolAdder(t *testing.T, pool *pgxpool.Pool) func(name, desc string, v []float32) {
	t.Helper()
	ctx := context.Background()
	var setID int64
	if err := pool.QueryRow(ctx, `SELECT current_set FROM weight_profiles WHERE name = 'default'`).Scan(&setID); err != nil {
		t.Fatal(err)
	}
	return func(name, desc string, v []float32) {
		t.Helper()
		var id int64
		if err := pool.QueryRow(ctx, `INSERT INTO tools (source_id, name, original_name, description, input_schema, content_hash)
			SELECT id, 'beta__' || $1, $1, $2, '{"type":"object"}', 'h' FROM sources WHERE name = 'beta' RETURNING id`, name, desc).Scan(&id); err != nil {
			t.Fatal(err)
		}
		exec(t, pool, `INSERT INTO tool_vectors (set_id, tool_id, embedding) VALUES ($1, $2, $3)`, setID, id, pgvector.NewVector(normalized(v)))
	}
}

// TestFusionKeepsAStrongLexicalHit is the case of a tool that matches every word of the
// query (first lexically, far ahead) but whose vector is orthogonal to the query's, among
// five tools that match one word each and whose vectors are close to the query's.
// Reciprocal rank fusion (equal weights) ranks the five above it (each is in both branches); the
// score-based fusions, which also score each candidate in the branch that did not return it,
// keep it in the top two with the default branch weights. (With equal weights min-max puts
// it fifth: the five tie at the bottom of the lexical list, and its floor gives each of them
// a sixth of the lexical weight, TestMinMaxFloor, on top of a vector share near 1.)
func TestFusionKeepsAStrongLexicalHit(t *testing.T) {
	t.Parallel()
	pool, _ := setup(t)
	ctx := context.Background()
	add := betaToolAdder(t, pool)
	add("dividend_calendar", "Quarterly dividend schedule: every dividend payment date of the quarter", unit(20, 21, 0))
	for i := range 5 {
		add(fmt.Sprintf("payout_%d", i), fmt.Sprintf("Company payout report %d with a dividend column", i), unit(10, 11, 0.1*float32(i+1)))
	}
	flush(t, pool)
	embedder := hashEmbedder{known: map[string][]float32{fusionQuery: unit(10, 11, 0)}}
	for _, c := range []struct {
		fusion search.Fusion
		within int // the strong lexical hit is among the first `within` results, 0: not in the top 5
	}{
		{search.FusionRRF, 0},
		{search.FusionMinMax, 2},
		{search.FusionDBSF, 2},
	} {
		st := search.DefaultSettings()
		st.Fusion = c.fusion
		if c.fusion == search.FusionRRF {
			st.WeightLexical, st.WeightVector = 1, 1 // ranks alone
		}
		s := search.New(pool, embedder, st, slog.New(slog.NewTextHandler(io.Discard, nil)))
		resp := mustSearch(t, ctx, s, search.Request{Query: fusionQuery, Mode: search.ModeHybrid, K: 5})
		got := names(resp)
		at := slices.Index(got, "beta__dividend_calendar") + 1
		if c.within == 0 && at != 0 || c.within > 0 && (at == 0 || at > c.within) {
			t.Errorf("%s: %v: the strong lexical hit at %d, want within %d (0: absent)", c.fusion, got, at, c.within)
		}
		if c.fusion == search.FusionRRF {
			continue
		}
		// cross-scored: the lexical hit carries a vector rank only if KNN returned it, and
		// every vector candidate has its exact BM25 score
		for _, r := range resp.Results {
			if r.Name != "beta__dividend_calendar" && r.LexicalRank == nil {
				t.Errorf("%s: %s has no lexical rank: vector candidates are scored lexically too", c.fusion, r.Name)
			}
		}
	}
}

// weightedEmbedder records the idf the search gives it.
type weightedEmbedder struct {
	hashEmbedder
	got *map[string]float64
}

func (w weightedEmbedder) EmbedWeighted(ctx context.Context, texts []string, idf map[string]float64) ([][]float32, error) {
	*w.got = idf
	return w.Embed(ctx, texts)
}

// TestQueryIDF: with QueryIDF the embedder gets each query word's BM25 idf in the lexical
// index: low for a word many tools have, 0 for a word the analysis drops (an english stop
// word, a legal form), the highest for a word no tool has; without it, no weights are read. A key restricted to some sources gets the
// idf of their documents alone.
func TestQueryIDF(t *testing.T) {
	t.Parallel()
	pool, _ := setup(t)
	ctx := context.Background()
	var got map[string]float64
	for _, on := range []bool{false, true} {
		got = nil
		st := search.DefaultSettings()
		st.QueryIDF = on
		s := search.New(pool, weightedEmbedder{testEmbedder, &got}, st, slog.New(slog.NewTextHandler(io.Discard, nil)))
		mustSearch(t, ctx, s, search.Request{Query: "get the stock price between zebras inc", Mode: search.ModeHybrid})
		if !on {
			if got != nil {
				t.Errorf("QueryIDF off: weights read: %v", got)
			}
			continue
		}
		// N and df counted from the index's documents
		count := func(lexeme string) float64 {
			var c float64
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM search_docs WHERE $1 = '' OR $1 = ANY (lexemes)`, lexeme).Scan(&c); err != nil {
				t.Fatal(err)
			}
			return c
		}
		n := count("")
		idf := func(df float64) float64 { return math.Log(1 + (n-df+0.5)/(df+0.5)) }
		want := map[string]float64{"get": idf(count("get")), "stock": idf(count("stock")), "between": 0, "inc": 0, "zebras": idf(0)}
		if count("get") == 0 || count("stock") == 0 || n < 5 {
			t.Fatalf("catalog changed: N %v, get %v, stock %v", n, count("get"), count("stock"))
		}
		for w, x := range want {
			if math.Abs(got[w]-x) > 1e-9 {
				t.Errorf("idf[%s] = %v, want %v (all: %v)", w, got[w], x, got)
			}
		}

		// a key restricted to beta gets the idf of beta's documents alone (beta's tools hold
		// neither "get" nor "stock" as often as the catalog does)
		count = func(lexeme string) float64 {
			var c float64
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM search_docs d JOIN sources s ON s.id = d.source_id
				WHERE s.name = 'beta' AND ($1 = '' OR $1 = ANY (d.lexemes))`, lexeme).Scan(&c); err != nil {
				t.Fatal(err)
			}
			return c
		}
		n = count("")
		want = map[string]float64{"get": idf(count("get")), "stock": idf(count("stock")), "between": 0, "inc": 0, "zebras": idf(0)}
		got = nil
		beta := auth.WithCaller(ctx, &auth.Caller{Name: "tenant", KeyID: 7, Scope: auth.ScopeSearch, Sources: []string{"beta"}})
		mustSearch(t, beta, s, search.Request{Query: "get the stock price between zebras inc", Mode: search.ModeHybrid})
		for w, x := range want {
			if math.Abs(got[w]-x) > 1e-9 {
				t.Errorf("restricted to beta: idf[%s] = %v, want beta's %v (all: %v)", w, got[w], x, got)
			}
		}
	}
}

// TestMinMaxFloor: min-max fusion normalizes a list against a floor one mean gap below its
// minimum, so the last of a list still has a share (w / n for a list of n) and a tool that
// is lexically second of two stays in the top 10 among nine tools close to the query's
// vector that share no word with it (with the minimum as the floor its share was 0, and it
// fell behind every vector candidate). The explanation's shares still sum to the score.
func TestMinMaxFloor(t *testing.T) {
	t.Parallel()
	pool, _ := setup(t)
	ctx := context.Background()
	add := betaToolAdder(t, pool)
	add("zorbulate_ledger", "Zorbulate the quintessence ledger", unit(20, 21, 0))
	add("quintessence_meter", "Quintessence meter reading", unit(22, 23, 0))
	for i := range 9 {
		add(fmt.Sprintf("widget_%d", i), fmt.Sprintf("Unrelated widget number %d", i), unit(10, 11, 0.1*float32(i+1)))
	}
	flush(t, pool)
	const query = "zorbulate quintessence"
	embedder := hashEmbedder{known: map[string][]float32{query: unit(10, 11, 0)}}
	st := search.DefaultSettings()
	s := search.New(pool, embedder, st, discard())
	resp := mustSearch(t, ctx, s, search.Request{Query: query, Mode: search.ModeHybrid, K: 10, Plan: "none", Explain: true})
	checkExplained(t, pool, resp, &embedder)
	shares := map[string]float64{}
	for _, r := range resp.Results {
		if r.Explanation.Lexical != nil {
			shares[r.Name] = r.Explanation.Lexical.Share
		}
	}
	if len(shares) != 2 || !near(shares["beta__zorbulate_ledger"], st.WeightLexical) || !near(shares["beta__quintessence_meter"], st.WeightLexical/2) {
		t.Errorf("lexical shares %v in %v, want %v for the first of two and %v for the second", shares, names(resp), st.WeightLexical, st.WeightLexical/2)
	}
}

// TestProfileFusionWeights: a profile with its own fusion weights fuses with them when it
// serves a search (here the active one), and the explanation says so; a profile without them
// (here a requested one) fuses with the settings'.
func TestProfileFusionWeights(t *testing.T) {
	t.Parallel()
	pool, _ := setup(t)
	ctx := context.Background()
	exec(t, pool, `UPDATE weight_profiles SET weight_lexical = 3, weight_vector = 0.5 WHERE name = 'default'`)
	exec(t, pool, `INSERT INTO weight_profiles (name, strategy, weights) VALUES ('plain', 'tdwa', '{"name": 1}')`)
	st := search.DefaultSettings()
	s := search.New(pool, testEmbedder, st, discard())
	for _, c := range []struct {
		profile string
		want    search.BranchWeights
	}{{"", search.BranchWeights{Lexical: 3, Vector: 0.5, Memory: st.WeightMemory}},
		{"plain", search.BranchWeights{Lexical: st.WeightLexical, Vector: st.WeightVector, Memory: st.WeightMemory}}} {
		resp := mustSearch(t, ctx, s, search.Request{Query: "stock price", Mode: search.ModeHybrid, K: 5, Plan: "none", Profile: c.profile, Explain: true})
		if resp.Explain.Weights != c.want {
			t.Errorf("profile %q: explained weights %+v, want %+v", c.profile, resp.Explain.Weights, c.want)
		}
		top := 0.0 // the lexical first's share is the lexical weight (min-max gives it 1)
		for _, r := range resp.Results {
			if r.Explanation.Lexical != nil {
				top = max(top, r.Explanation.Lexical.Share)
			}
		}
		if !near(top, c.want.Lexical) {
			t.Errorf("profile %q: the best lexical share %v, want the lexical weight %v", c.profile, top, c.want.Lexical)
		}
	}
}

// TestVectorConfidence: the query names both words of one tool and one word of another,
// and its vector is close to none (the best similarity is 0.2, the second tool's; the first
// is the vector list's last). Min-max
// stretches that list to full weight, so without a confidence the second tool (lexical half
// weight plus the whole vector weight) passes the first; with τ 0.4 the vector list weighs
// 0.2 / 0.4 of its weight and the tool that names the query stays first. A query whose
// vector is close to a tool (similarity above τ) is fused exactly as without it.
func TestVectorConfidence(t *testing.T) {
	t.Parallel()
	pool, _ := setup(t)
	ctx := context.Background()
	add := betaToolAdder(t, pool)
	// the query vector is -e10, the opposite of every word hashed there, so the catalog's
	// other tools (bags of words, no negative component) have similarity <= 0 and these
	// eps / √(1 + eps²); the tool that names both words points away from it (-0.89, the
	// list's last)
	add("zorbulate_ledger", "Zorbulate the quintessence ledger", unit(20, 10, 2))
	best := float32(0.2 / math.Sqrt(1-0.04))
	add("quintessence_meter", "Quintessence meter reading", unit(21, 10, -best))
	for i := range 6 {
		add(fmt.Sprintf("widget_%d", i), fmt.Sprintf("Unrelated widget number %d", i), unit(22+i, 10, -0.1-0.01*float32(i)))
	}
	flush(t, pool)
	const query, close = "zorbulate quintessence", "zorbulate quintessence meter"
	away := make([]float32, dims)
	away[10] = -1
	embedder := hashEmbedder{known: map[string][]float32{query: away, close: unit(21, 10, -0.1)}}
	run := func(tau float64, q string) search.Response {
		st := search.DefaultSettings()
		st.VectorConfidence = tau
		s := search.New(pool, embedder, st, discard())
		resp := mustSearch(t, ctx, s, search.Request{Query: q, Mode: search.ModeHybrid, K: 5, Plan: "none", Explain: true})
		checkExplained(t, pool, resp, &embedder)
		if resp.Explain.VectorConfidence != tau {
			t.Errorf("explained vector confidence %v, want %v", resp.Explain.VectorConfidence, tau)
		}
		return resp
	}
	st := search.DefaultSettings()
	if got := names(run(0, query)); got[0] != "beta__quintessence_meter" {
		t.Errorf("without a confidence: %v, want the vector's best first (the case this setting is for)", got)
	}
	resp := run(0.4, query)
	if got := names(resp); got[0] != "beta__zorbulate_ledger" || got[1] != "beta__quintessence_meter" {
		t.Errorf("confidence 0.4: %v, want the tool that names both words first, then the one that names one", got)
	}
	for _, r := range resp.Results {
		if r.Name == "beta__quintessence_meter" {
			// the top of the vector list: min-max share 1, times its weight scaled by 0.2 / 0.4
			if v := r.Explanation.Vector; v == nil || math.Abs(v.Share-st.WeightVector*0.5) > 1e-6 {
				t.Errorf("confidence 0.4: vector explanation %+v, want share %v", v, st.WeightVector*0.5)
			}
		}
	}
	sure, plain := run(0.4, close), run(0, close)
	if !slices.Equal(names(sure), names(plain)) {
		t.Errorf("a close vector: %v with confidence 0.4, %v without", names(sure), names(plain))
	}
	for i := range sure.Results {
		if !near(sure.Results[i].Score, plain.Results[i].Score) {
			t.Errorf("a close vector: %s scored %v with confidence 0.4, %v without", sure.Results[i].Name, sure.Results[i].Score, plain.Results[i].Score)
		}
	}
}

// TestMeaningBranch: two tools with the same vector, one that says the query's word twice
// (first lexically) and one that says it once beside words of the same meaning. The meaning
// branch re-scores the candidates by what their words mean and, weighted enough, puts the
// second first; off, the lexical order stands. Its share is explained.
func TestMeaningBranch(t *testing.T) {
	t.Parallel()
	pool, _ := setup(t)
	ctx := context.Background()
	add := betaToolAdder(t, pool)
	add("zoo_purchase", "Purchase purchase: zebra giraffe habitat", unit(30, 31, 0.5))
	add("order_goods", "Purchase: acquire or buy goods, paying the seller", unit(30, 31, 0.5))
	flush(t, pool)
	const query = "purchase"
	embedder := hashEmbedder{known: map[string][]float32{query: unit(30, 31, 0.5)}}
	service := func(w float64) *search.Service {
		st := search.DefaultSettings()
		st.WeightMeaning = w
		return search.New(pool, embedder, st, discard())
	}
	run := func(w float64) search.Response {
		resp := mustSearch(t, ctx, service(w), search.Request{Query: query, Mode: search.ModeHybrid, K: 5, Plan: "none", Explain: true})
		checkExplained(t, pool, resp, &embedder)
		if resp.Explain.Weights.Meaning != w {
			t.Errorf("explained meaning weight %v, want %v", resp.Explain.Weights.Meaning, w)
		}
		return resp
	}
	off := run(0)
	if got := names(off); got[0] != "beta__zoo_purchase" {
		t.Fatalf("meaning off: %v, want the lexical order", got)
	}
	for _, r := range off.Results {
		if r.Explanation.Meaning != nil {
			t.Errorf("meaning off: %s explained %+v", r.Name, r.Explanation.Meaning)
		}
	}
	on := run(3)
	if got := names(on); got[0] != "beta__order_goods" || got[1] != "beta__zoo_purchase" {
		t.Fatalf("meaning weight 3: %v, want the tool whose words mean what the query means first", got)
	}
	if m := on.Results[0].Explanation.Meaning; m == nil || !near(m.Share, 3) {
		t.Errorf("meaning weight 3: the best meaning explained %+v, want the whole weight (min-max share 1)", m)
	}
	lexical := mustSearch(t, ctx, service(3), search.Request{Query: query, Mode: search.ModeLexical, K: 5, Plan: "none"})
	if got := names(lexical); got[0] != "beta__zoo_purchase" {
		t.Errorf("a lexical search: %v, want no meaning branch", got)
	}
}
