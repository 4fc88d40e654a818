package enrich_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/lexicon"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/testfactory"
)

func builtinLexicon(t testing.TB) *lexicon.Lexicon {
	t.Helper()
	lex, err := lexicon.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return lex
}

// The expansion holds the words a request may use instead of the tool's own: synonyms
// ("duplicate" for copy), narrower words ("assignment" for task) and words of the definition
// ("precipitation" for weather); never a word the document already has, never one twice.
func TestExpand(t *testing.T) {
	lex := builtinLexicon(t)
	for _, tc := range []struct {
		name, description string
		want              []string
	}{
		{"copy_sheet", "Copy an existing sheet to a new sheet.", []string{"duplicate", "worksheet"}},
		{"close_tasks", "Close tasks in Todoist.", []string{"shut", "assignment"}},
		{"get_weather", "Current weather conditions for a city.", []string{"precipitation", "atmosphere", "metropolis"}},
	} {
		d := enrich.NewDocument(tc.name, "", tc.description, []byte(`{"type":"object"}`))
		got := enrich.Expand(lex, d)
		if len(got) == 0 || len(got) > 60 {
			t.Fatalf("%s: %d words", tc.name, len(got))
		}
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("%s: expansion %v lacks %q", tc.name, got, w)
			}
		}
		seen := map[string]bool{}
		own := embed.Words(tc.name + " " + tc.description)
		for _, w := range got {
			if seen[w] || slices.Contains(own, w) {
				t.Errorf("%s: %q repeated or the document's own", tc.name, w)
			}
			seen[w] = true
		}
		again := enrich.Expand(lex, d)
		if !slices.Equal(got, again) {
			t.Fatalf("%s: two expansions differ", tc.name)
		}
	}
}

// The sense that fits the document wins over the most frequent one: a directory among
// files on a computer is a listing of files, not of names and addresses.
func TestSenseFitsTheDocument(t *testing.T) {
	lex := builtinLexicon(t)
	first := lex.Senses("directory")[0]
	ctx := map[string]bool{}
	for _, w := range embed.Words("create a folder for the files on the computer disk") {
		ctx[embed.Stem(w)] = true
	}
	id, ok := enrich.Sense(lex, "directory", ctx)
	if !ok {
		t.Fatal("no sense of directory")
	}
	if id == first || !slices.Contains(lex.Synset(id).Gloss, "computer") {
		t.Fatalf("sense %+v chosen, the most frequent is %+v", lex.Synset(id), lex.Synset(first))
	}
	if _, ok := enrich.Sense(lex, "xqzzy", ctx); ok {
		t.Fatal("a sense of a word the lexicon lacks")
	}
}

// With a lexicon the heuristic enricher stores the expansion as its own step and component,
// and the lexical index holds its words, so a request that names the tool only by a related
// word finds it; without one it is the heuristic-v1 enricher and stores none.
func TestEnrichToolStoresExpansion(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	_, res := testfactory.Catalog(ctx, t, pool, "docs", []catalog.Tool{testfactory.Tool("copy_sheet", "Copy an existing sheet to a new sheet.")}, nil)
	svc := testfactory.LocalEnricher(pool, 3)
	svc.Enricher = enrich.Heuristic{Lexicon: lexicon.Builtin}
	if svc.Enricher.Model() != "heuristic-v4" || (enrich.Heuristic{}).Model() != "heuristic-v1" {
		t.Fatalf("models %s, %s", svc.Enricher.Model(), enrich.Heuristic{}.Model())
	}
	testfactory.Enrich(ctx, t, svc, res.Changed...)
	id := res.Changed[0]
	var text string
	if err := pool.QueryRow(ctx, "SELECT text FROM tool_components WHERE tool_id = $1 AND kind = 'expansion'", id).Scan(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(" "+text+" ", " duplicate ") {
		t.Fatalf("expansion component %q lacks duplicate", text)
	}
	if n := countRows(t, pool, "SELECT count(*) FROM tool_enrichments WHERE tool_id = $1 AND step = 'expansion' AND model = 'heuristic-v4'", id); n != 1 {
		t.Fatalf("%d expansion steps stored", n)
	}
	// the concat component is the tool's own text only
	if n := countRows(t, pool, "SELECT count(*) FROM tool_components WHERE tool_id = $1 AND kind = 'concat' AND text LIKE '%duplicate%'", id); n != 0 {
		t.Fatal("the expansion is in the concat component")
	}
	if _, err := lexical.Flush(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, pool, "SELECT count(*) FROM search_postings WHERE tool_id = $1 AND lexeme = 'duplic'", id); n != 1 {
		t.Fatalf("the lexical index has %d postings of duplic for the tool", n)
	}
	// below the tool's own words: a word of the expansion weighs less than one of the name
	var own, related float64
	if err := pool.QueryRow(ctx, `SELECT (SELECT tfs[array_position(lexemes, 'sheet')] FROM search_docs WHERE tool_id = $1),
	                                      (SELECT tfs[array_position(lexemes, 'duplic')] FROM search_docs WHERE tool_id = $1)`, id).Scan(&own, &related); err != nil {
		t.Fatal(err)
	}
	if related <= 0 || related >= own {
		t.Fatalf("term frequency of duplic %v, of sheet %v", related, own)
	}

	_, res2 := testfactory.Catalog(ctx, t, pool, "plain", []catalog.Tool{testfactory.Tool("copy_sheet", "Copy an existing sheet to a new sheet.")}, nil)
	testfactory.Enrich(ctx, t, testfactory.LocalEnricher(pool, 3), res2.Changed...)
	if n := countRows(t, pool, "SELECT count(*) FROM tool_components WHERE tool_id = $1 AND kind = 'expansion'", res2.Changed[0]); n != 0 {
		t.Fatal("heuristic-v1 stored an expansion")
	}
}

// The heuristic enricher loads its lexicon on the first expansion, not when it is built or
// named: a process that never enriches (serve with TOOLGATE_ROLE=api) never parses it. A
// lexicon that fails to load fails the expansion.
func TestHeuristicLoadsItsLexiconOnFirstUse(t *testing.T) {
	loads := 0
	h := enrich.Heuristic{Lexicon: func() (*lexicon.Lexicon, error) { loads++; return lexicon.Builtin() }}
	if h.Model() != "heuristic-v4" || len(h.Supersedes()) != 3 || loads != 0 {
		t.Fatalf("model %s, supersedes %v, %d loads before any expansion", h.Model(), h.Supersedes(), loads)
	}
	words, _, err := h.Expansion(context.Background(), enrich.Document{Name: "copy_sheet", Description: "Copy a sheet."})
	if err != nil || len(words) == 0 || loads != 1 {
		t.Fatalf("expansion %v, %v after %d loads", words, err, loads)
	}
	broken := errors.New("corrupt lexicon")
	h.Lexicon = func() (*lexicon.Lexicon, error) { return nil, broken }
	if _, _, err := h.Expansion(context.Background(), enrich.Document{Name: "copy_sheet"}); !errors.Is(err, broken) {
		t.Fatalf("expansion with a broken lexicon: %v, want %v", err, broken)
	}
}

// Names get no senses: the tools of Cullen/Frost Bankers, Allison Transmission and Apple
// (the demo catalog's) are expanded by their financial words only, with no synonym of
// frost (weather), transmission (sending) or apple (fruit trees); a server's name in the
// tool's namespace neither.
func TestExpandLeavesNamesAlone(t *testing.T) {
	lex := builtinLexicon(t)
	companies, err := dataset.Companies(dataset.MaxCompanies())
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]dataset.Company{}
	for _, c := range companies {
		byName[c.Name] = c
	}
	// synonyms are the words of every sense of a name word and of its hyponyms
	// ("crabapple"), but the word itself
	synonyms := func(word string) []string {
		var out []string
		for _, id := range lex.Senses(word) {
			for _, r := range append([]lexicon.SynsetID{id}, lex.Hyponyms(id)...) {
				for _, w := range lex.Synset(r).Words {
					if w != word {
						out = append(out, w)
					}
				}
			}
		}
		if len(out) == 0 {
			t.Fatalf("%q has no synonyms", word)
		}
		return out
	}
	check := func(d enrich.Document, name string) {
		t.Helper()
		got := enrich.Expand(lex, d)
		for _, w := range synonyms(name) {
			if slices.Contains(got, w) {
				t.Errorf("%s: expansion %v has %q, a word of the senses of %q", d.Name, got, w, name)
			}
		}
		if len(got) == 0 {
			t.Errorf("%s: no expansion of its own words", d.Name)
		}
	}
	for _, tc := range []struct{ company, name string }{
		{"Cullen/Frost Bankers", "frost"},
		{"Allison Transmission", "transmission"},
		{"Apple", "apple"},
	} {
		c, ok := byName[tc.company]
		if !ok {
			t.Fatalf("no company %q", tc.company)
		}
		for _, tool := range dataset.Tools([]dataset.Company{c}) {
			check(enrich.NewDocument(tool.Name, "", tool.Description, tool.InputSchema), tc.name)
		}
	}
	check(enrich.NewDocument("git__git_status", "", "Shows the working tree status.", []byte(`{"type":"object"}`)), "git")
}
