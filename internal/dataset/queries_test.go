package dataset

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/eval"
)

func TestCompanyList(t *testing.T) {
	if MaxCompanies() < 1000 {
		t.Fatalf("only %d companies", MaxCompanies())
	}
	all, err := Companies(MaxCompanies())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(all[:len(DemoCompanies)], DemoCompanies) {
		t.Fatal("the demo companies must stay the first entries")
	}
	slugs, tickers := map[string]string{}, map[string]string{}
	for _, c := range all {
		if c.Name == "" || c.Ticker == "" || strings.ContainsAny(c.Name+c.Ticker, "|;") {
			t.Fatalf("bad company %+v", c)
		}
		if prev, ok := slugs[Slug(c.Name)]; ok {
			t.Errorf("%q and %q share the tool slug %q", prev, c.Name, Slug(c.Name))
		}
		if prev, ok := tickers[c.Ticker]; ok {
			t.Errorf("%q and %q share the ticker %s", prev, c.Name, c.Ticker)
		}
		slugs[Slug(c.Name)], tickers[c.Ticker] = c.Name, c.Name
	}
	for _, n := range []int{0, MaxCompanies() + 1} {
		if _, err := Companies(n); err == nil {
			t.Errorf("Companies(%d) accepted", n)
		}
	}
}

func TestPhrasingTables(t *testing.T) {
	for _, tmpl := range Templates {
		if n := len(singlePhrasings[tmpl.Function]); n < 15 {
			t.Errorf("%s has %d single phrasings, want ≥ 15", tmpl.Function, n)
		}
	}
	if len(multiToolPhrasings) < 10 || len(multiCompanyPhrasings) < 10 || len(multiHopPhrasings) < 10 {
		t.Fatal("want ≥ 10 phrasings per multi kind")
	}
}

func TestQueries(t *testing.T) {
	companies, err := Companies(200)
	if err != nil {
		t.Fatal(err)
	}
	opts := QueryOptions{Seed: 7, Single: 50, MultiTool: 20, MultiCompany: 20, MultiHop: 20}
	qs := Queries(companies, opts)
	if !reflect.DeepEqual(qs, Queries(companies, opts)) {
		t.Fatal("same seed, different queries")
	}
	opts.Seed = 8
	if reflect.DeepEqual(qs, Queries(companies, opts)) {
		t.Fatal("a different seed gave the same queries")
	}
	tools := map[string]bool{}
	for _, tool := range Tools(companies) {
		tools[tool.Name] = true
	}
	kinds := map[string]int{}
	for _, q := range qs {
		kinds[q.Kind]++
		if strings.Contains(q.Query, "{") {
			t.Errorf("%s: unfilled placeholder in %q", q.ID, q.Query)
		}
		for _, g := range q.Gold {
			if !tools[g] {
				t.Errorf("%s: gold %s is not in the catalog", q.ID, g)
			}
		}
		switch q.Kind {
		case KindSingle:
			if len(q.Gold) != 1 {
				t.Errorf("%s: single query with %d gold tools", q.ID, len(q.Gold))
			}
		case KindMultiCompany:
			if len(q.Gold) < 2 || len(q.Gold) > 5 {
				t.Errorf("%s: %d companies", q.ID, len(q.Gold))
			}
		default:
			if len(q.Gold) < 2 {
				t.Errorf("%s: %s query with %d gold tools", q.ID, q.Kind, len(q.Gold))
			}
		}
	}
	if !reflect.DeepEqual(kinds, map[string]int{KindSingle: 50, KindMultiTool: 20, KindMultiCompany: 20, KindMultiHop: 20}) {
		t.Fatalf("kinds %v", kinds)
	}
	// The single queries cycle through the five functions.
	for i, fn := range []string{"current_stock_price", "stock_price_history", "analyst_price_targets", "revenue", "net_income"} {
		if !strings.HasSuffix(qs[i].Gold[0], "_"+fn) {
			t.Errorf("single query %d: gold %s, want function %s", i, qs[i].Gold[0], fn)
		}
	}
}

// The shipped build must be exactly what `toolgate dataset scalemcp --companies 1000 --seed 1
// --out testdata/scalemcp-1000` writes today, and must load as an eval dataset.
func TestShippedBuildIsReproducible(t *testing.T) {
	ds, err := Build(1000, DefaultQueryOptions)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := eval.Write(out, ds); err != nil {
		t.Fatal(err)
	}
	shipped := filepath.Join("..", "..", "testdata", "scalemcp-1000")
	for _, name := range []string{eval.ToolsFile, eval.QueriesFile} {
		want, err := os.ReadFile(filepath.Join(shipped, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s differs from a fresh build: regenerate with toolgate dataset scalemcp --companies 1000 --seed 1 --out testdata/scalemcp-1000", name)
		}
	}
	loaded, err := eval.Load(shipped)
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded.Tools) != 5000 || len(loaded.Queries) != 2500 {
		t.Fatalf("shipped build has %d tools and %d queries", len(loaded.Tools), len(loaded.Queries))
	}
}
