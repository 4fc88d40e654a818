package tune

import (
	"context"
	"io"
	"log/slog"
	"math"
	"testing"

	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
)

// TestLexicalScoresAreTheSearchs: the lexical list a tune reads for a labelled query is the
// search's, for queries in the languages the index holds too: a German request finds the
// German tool by its German stem ("Temperaturen": temperatur, not the English temperaturen),
// with the BM25
// the search gives it.
func TestLexicalScoresAreTheSearchs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	if _, err := pool.Exec(ctx, `INSERT INTO sources (name, kind) VALUES ('w', 'catalog')`); err != nil {
		t.Fatal(err)
	}
	for name, desc := range map[string]string{
		"get_forecast": "Ruft die aktuellen Wettervorhersagen für eine Stadt ab und gibt die Temperaturen zurück.",
		"get_news":     "Return the latest news headlines for a country.",
	} {
		if _, err := pool.Exec(ctx, `INSERT INTO tools (source_id, name, original_name, description, input_schema, content_hash)
			SELECT id, 'w__' || $1, $1, $2, '{"type":"object"}', 'h' FROM sources WHERE name = 'w'`, name, desc); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := lexical.Flush(ctx, pool); err != nil {
		t.Fatal(err)
	}
	// impacts of the final average: the tune's Σ idf · impact is then the search's exact BM25 (up to
	// the impacts' float4)
	if _, err := lexical.Reimpact(ctx, pool); err != nil {
		t.Fatal(err)
	}
	const request = "Temperaturen"
	got, err := lexicalScores(ctx, pool, []string{request}, func(int, int) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	resp, err := search.New(pool, nil, search.DefaultSettings(), slog.New(slog.NewTextHandler(io.Discard, nil))).
		Search(ctx, search.Internal(), search.Request{Query: request, Mode: search.ModeLexical, K: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != 1 || resp.Results[0].Name != "w__get_forecast" {
		t.Fatalf("search: %+v, want w__get_forecast alone", resp.Results)
	}
	var id int64
	if err := pool.QueryRow(ctx, `SELECT id FROM tools WHERE name = 'w__get_forecast'`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if len(got[0]) != 1 || got[0][0].id != id || math.Abs(got[0][0].bm25-resp.Results[0].BM25) > 1e-6 {
		t.Errorf("tune's lexical list %+v, want tool %d with BM25 %v", got[0], id, resp.Results[0].BM25)
	}
}
