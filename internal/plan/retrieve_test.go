package plan

import (
	"cmp"
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/eval"
)

// searchFunc returns the ranking of one intent, best first, at most n tools.
type searchFunc func(ctx context.Context, query string, variants []string, n int) ([]Ranked, error)

// retrieve runs a plan as the search does (internal/search): one ranking per intent for n
// candidates each, then Merge into k. A plan of one intent is its ranking cut to k.
func retrieve(ctx context.Context, p Plan, n, k int, search searchFunc) ([]Ranked, error) {
	perIntent := make([][]Ranked, len(p.Intents))
	for i, in := range p.Intents {
		r, err := search(ctx, in.Query, in.Variants, n)
		if err != nil {
			return nil, err
		}
		perIntent[i] = r
	}
	return Merge(k, perIntent), nil
}

// bm25 is a small in-memory BM25 index over tool names (split at '_') and descriptions,
// standing in for the search statement to measure what planning does to a lexical ranking.
type bm25 struct {
	names    []string
	postings map[string][]posting
	lens     []float64
	avg      float64
}

type posting struct{ doc, tf int }

func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func newBM25(tools []catalog.Tool) *bm25 {
	b := &bm25{postings: map[string][]posting{}}
	for i, t := range tools {
		tf := map[string]int{}
		ws := words(strings.ReplaceAll(t.Name, "_", " ") + " " + t.Description)
		for _, w := range ws {
			tf[w]++
		}
		for w, n := range tf {
			b.postings[w] = append(b.postings[w], posting{i, n})
		}
		b.names = append(b.names, t.Name)
		b.lens = append(b.lens, float64(len(ws)))
		b.avg += float64(len(ws))
	}
	b.avg /= float64(len(tools))
	return b
}

func (b *bm25) rank(query string, n int) []string {
	score := map[int]float64{}
	for _, w := range slices.Compact(slices.Sorted(slices.Values(words(query)))) {
		ps := b.postings[w]
		if len(ps) > len(b.names)/2 {
			continue // "the", "of", "stock": too common to rank, and slow
		}
		idf := math.Log(1 + (float64(len(b.names))-float64(len(ps))+0.5)/(float64(len(ps))+0.5))
		for _, p := range ps {
			tf := float64(p.tf)
			score[p.doc] += idf * tf * 2.2 / (tf + 1.2*(0.25+0.75*b.lens[p.doc]/b.avg))
		}
	}
	// Top n by insertion: most documents score below the n-th and are rejected at once.
	better := func(x, y int) bool { return score[x] > score[y] || (score[x] == score[y] && x < y) }
	top := make([]int, 0, n+1)
	for d := range score {
		if len(top) == n && !better(d, top[n-1]) {
			continue
		}
		i := len(top)
		for i > 0 && better(d, top[i-1]) {
			i--
		}
		top = slices.Insert(top, i, d)
		if len(top) > n {
			top = top[:n]
		}
	}
	out := make([]string, len(top))
	for i, d := range top {
		out[i] = b.names[d]
	}
	return out
}

// search fuses the rankings of the query and its variants by reciprocal rank (k=60), as the
// search statement does.
func (b *bm25) search(_ context.Context, query string, variants []string, n int) ([]Ranked, error) {
	fused := map[string]float64{}
	for _, q := range append([]string{query}, variants...) {
		for r, name := range b.rank(q, n) {
			fused[name] += 1 / float64(60+r+1)
		}
	}
	out := make([]Ranked, 0, len(fused))
	for name, s := range fused {
		out = append(out, Ranked{ID: name, Score: s})
	}
	slices.SortFunc(out, func(x, y Ranked) int { return cmp.Or(cmp.Compare(y.Score, x.Score), cmp.Compare(x.ID, y.ID)) })
	return out[:min(n, len(out))], nil
}

func TestRetrieveMerges(t *testing.T) {
	calls := 0
	search := func(_ context.Context, q string, v []string, n int) ([]Ranked, error) {
		calls++
		if n != 4 {
			t.Errorf("n = %d", n)
		}
		return ranking(1, 0.1, q+"1", q+"2", q+"3"), nil
	}
	p := Plan{Intents: []Intent{{Query: "a"}, {Query: "b"}}}
	got, err := retrieve(context.Background(), p, 4, 3, search)
	if err != nil || calls != 2 || !slices.Equal(ids(got), []string{"a1", "b1", "a2"}) {
		t.Errorf("Retrieve = %v, %v (%d calls)", ids(got), err, calls)
	}
	boom := errors.New("boom")
	if _, err := retrieve(context.Background(), p, 4, 3, func(context.Context, string, []string, int) ([]Ranked, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("err = %v", err)
	}
}

// TestPlanningGain runs 600 queries of the shipped ScaleMCP-style dataset through an in-memory BM25 search,
// without a plan and with the heuristic planner (full mode) + Merge, and asserts that
// planning raises Completeness@10 on multi-company and multi-hop queries without lowering
// Recall@10 on single-tool ones. Run with -v for the table.
func TestPlanningGain(t *testing.T) {
	ds, err := eval.Load("../../testdata/scalemcp-1000")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := dataset.Companies(1000)
	if err != nil {
		t.Fatal(err)
	}
	// The first 150 queries of each kind keep the test within a few seconds.
	var queries []eval.Query
	seen := map[string]int{}
	for _, q := range ds.Queries {
		if seen[q.Kind]++; seen[q.Kind] <= 150 {
			queries = append(queries, q)
		}
	}
	idx := newBM25(ds.Tools)
	h := NewHeuristic(dataset.Aliases(cs))
	const n = 30
	run := func(mode Mode) eval.Report {
		search := func(ctx context.Context, query string, k int) ([]string, error) {
			p, _ := h.Plan(ctx, query, mode)
			r, err := retrieve(ctx, p, n, k, idx.search)
			return ids(r), err
		}
		rep, err := eval.Run(context.Background(), queries, search, eval.Options{Ks: []int{10}})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	none, full := run(ModeNone), run(ModeFull)
	t.Logf("%-14s %21s %21s", "kind", "recall@10 none→full", "complete@10 none→full")
	for _, kind := range []string{dataset.KindSingle, dataset.KindMultiTool, dataset.KindMultiCompany, dataset.KindMultiHop} {
		a, b := none.ByKind[kind].Metrics, full.ByKind[kind].Metrics
		t.Logf("%-14s %10.3f → %.3f %10.3f → %.3f", kind, a["recall@10"], b["recall@10"], a["completeness@10"], b["completeness@10"])
	}
	for _, kind := range []string{dataset.KindMultiCompany, dataset.KindMultiHop} {
		if a, b := none.ByKind[kind].Metrics["completeness@10"], full.ByKind[kind].Metrics["completeness@10"]; b < a+0.05 {
			t.Errorf("%s: completeness@10 %.3f → %.3f, want a clear gain", kind, a, b)
		}
	}
	for _, kind := range []string{dataset.KindSingle, dataset.KindMultiTool} {
		if a, b := none.ByKind[kind].Metrics["recall@10"], full.ByKind[kind].Metrics["recall@10"]; b < a-0.01 {
			t.Errorf("%s: recall@10 %.3f → %.3f, want no loss", kind, a, b)
		}
	}
}
