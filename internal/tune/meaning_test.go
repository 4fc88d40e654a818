package tune

import (
	"context"
	"math"
	"testing"

	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/meaning"
	"github.com/toolgate/toolgate/internal/pgtest"
)

// TestMeaningScoresAreTheCosines: the meaning cosines a tune reads for a labelled query are
// those of the query's meaning and of each candidate's stored one (the statement's mng), for
// the tools of its pool and of its lexical list's top; nothing for a tool without a meaning,
// and nothing at all with the branch off.
func TestMeaningScoresAreTheCosines(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	texts := map[string]string{"buy": "Purchase shares of a company", "sell": "Sell stock at the market price",
		"xq": "XQ-7"}
	ids := map[string]int64{}
	if _, err := pool.Exec(ctx, `INSERT INTO sources (name, kind) VALUES ('m', 'catalog')`); err != nil {
		t.Fatal(err)
	}
	for name, desc := range texts {
		var id int64
		if err := pool.QueryRow(ctx, `INSERT INTO tools (source_id, name, original_name, description, input_schema, content_hash)
			SELECT id, 'm__' || $1, $1, $2, '{"type":"object"}', 'h' FROM sources WHERE name = 'm' RETURNING id`,
			name, desc).Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids[name] = id
	}
	if _, err := lexical.Flush(ctx, pool); err != nil {
		t.Fatal(err)
	}
	space, err := meaning.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	const request = "acquire equity in a firm"
	qv, _ := space.Vector(request)
	want := func(name string) float64 {
		tv, ok := space.Vector("m__" + name + " " + texts[name])
		if !ok {
			t.Fatalf("%s has no meaning", name)
		}
		at := map[int32]float32{}
		for i, d := range tv.Indices() {
			at[d] = tv.Values()[i]
		}
		var s float64
		for i, d := range qv.Indices() {
			s += float64(qv.Values()[i]) * float64(at[d])
		}
		return s
	}
	build := func(weight float64) *model {
		m := &model{tools: []tool{{id: ids["buy"]}, {id: ids["xq"]}}, fusion: fusionConfig{cand: 20, meaning: weight}}
		m.queries = []query{{pool: []candidate{{tool: 0}, {tool: 1}}, lexical: []lexScore{{ids["sell"], 1}}}}
		if err := m.meaningScores(ctx, pool, []string{request}); err != nil {
			t.Fatal(err)
		}
		return m
	}
	got := build(0.3).queries[0].meaning
	if len(got) != 2 {
		t.Fatalf("meaning cosines %v, want the two tools with a meaning", got)
	}
	for _, name := range []string{"buy", "sell"} {
		if math.Abs(got[ids[name]]-want(name)) > 1e-6 {
			t.Errorf("%s: cosine %v, want %v", name, got[ids[name]], want(name))
		}
	}
	if got[ids["buy"]] <= got[ids["sell"]] {
		t.Errorf("purchase %v, sell %v: the query means buying", got[ids["buy"]], got[ids["sell"]])
	}
	if off := build(0).queries[0].meaning; off != nil {
		t.Errorf("branch off: %v read", off)
	}
}
