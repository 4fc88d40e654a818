package tune

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"math"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// TestTuneScoresTheStatementsRanking: the fused ranking a tune scores a weighting by is the
// Search statement's. On one catalog, for each fusion method, the plain hybrid search of
// each request (no plan; exactly named tools set aside, since a tune leaves name matches
// out) returns its tools in the order, and with the fused scores, that the tune computes for
// the serving profile's weighting from the stored component vectors.
func TestTuneScoresTheStatementsRanking(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	tools, uses := testfactory.MisleadingCatalog() // 48 tools: every tool is in each query's pool
	_, res := testfactory.Catalog(ctx, t, pool, "m", tools, nil)
	testfactory.Enrich(ctx, t, testfactory.LocalEnricher(pool, 3), res.Changed...)
	if _, err := pool.Exec(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	embedder := embed.NewLocal(384)
	var texts []string
	for i, u := range uses {
		if i%4 == 0 {
			texts = append(texts, u.Query)
		}
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

	for _, fusion := range []search.Fusion{search.FusionMinMax, search.FusionDBSF, search.FusionRRF} {
		st := search.DefaultSettings()
		st.Fusion, st.VectorConfidence, st.WeightMeaning = fusion, search.DefaultVectorConfidence, search.DefaultWeightMeaning
		svc := search.New(pool, embedder, st, slog.New(slog.NewTextHandler(io.Discard, nil)))
		m, wt := statementModel(t, ctx, pool, embedder, st, texts)
		fused := m.fusedScores(wt, m.all())
		compared := 0
		for i, text := range texts {
			resp, err := svc.Search(ctx, search.Internal(), search.Request{Query: text, Plan: "none", K: st.Candidates})
			if err != nil {
				t.Fatal(err)
			}
			named := map[string]bool{}
			var got []search.Result
			for _, r := range resp.Results {
				if r.NameMatch {
					named[r.Name] = true
				} else {
					got = append(got, r)
				}
			}
			type scored struct {
				name  string
				id    int64
				score float64
			}
			var want []scored
			for id, s := range fused[i] {
				if !named[names[id]] {
					want = append(want, scored{names[id], id, s})
				}
			}
			slices.SortFunc(want, func(a, b scored) int { return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.id, b.id)) })
			if len(want) < len(got) {
				t.Fatalf("%s %q: the tune ranks %d tools, the search returned %d", fusion, text, len(want), len(got))
			}
			for j, r := range got {
				if r.Name != want[j].name || math.Abs(r.Score-want[j].score) > 1e-5 {
					t.Errorf("%s %q #%d: search %s %.6f, tune %s %.6f", fusion, text, j+1, r.Name, r.Score, want[j].name, want[j].score)
					break
				}
				compared++
			}
		}
		if compared < len(texts)*10 {
			t.Errorf("%s: only %d results compared over %d requests", fusion, compared, len(texts))
		}
	}
}

// statementModel builds the tune's model of texts as Run does (no labels: every text's
// pool and lexical list) with the active profile's weighting under settings st.
func statementModel(t *testing.T, ctx context.Context, p *pgxpool.Pool, embedder embed.Embedder, st search.Settings, texts []string) (*model, weighting) {
	t.Helper()
	base, err := baseline(ctx, db.New(p), "", st)
	if err != nil {
		t.Fatal(err)
	}
	lexical, err := lexicalScores(ctx, p, texts, func(int, int) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	vecs, err := embedder.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	fz := fusionOf(st)
	positives, forced := make([]map[int64]bool, len(texts)), make([]map[int64]bool, len(texts))
	for i := range texts {
		positives[i], forced[i] = map[int64]bool{}, map[int64]bool{}
		for _, l := range lexical[i][:min(len(lexical[i]), fz.cand)] {
			forced[i][l.id] = true
		}
	}
	m, err := scan(ctx, p, vecs, positives, forced, poolPerKind, func(int, int) {})
	if err != nil {
		t.Fatal(err)
	}
	m.fusion, m.fuser = fz, &fuser{ctx: ctx, pool: p}
	for i := range m.queries {
		m.queries[i].lexical = lexical[i]
	}
	if err := m.meaningScores(ctx, p, texts); err != nil {
		t.Fatal(err)
	}
	m.prepare()
	return m, weightsOf(base.profile, base.fusion.WeightLexical, base.fusion.WeightVector)
}

// all is every query of the model.
func (m *model) all() []int {
	out := make([]int, len(m.queries))
	for i := range out {
		out[i] = i
	}
	return out
}
