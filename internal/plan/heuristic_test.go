package plan

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/eval"
)

// demoAliases is the vocabulary of the 60 demo companies: tickers and aliases → names.
func demoAliases() map[string]string {
	return dataset.Aliases(dataset.DemoCompanies)
}

func TestDecompose(t *testing.T) {
	h := NewHeuristic(demoAliases())
	cases := []struct {
		query string
		want  []string
	}{
		{"revenue of Apple, Ford and Tesla", []string{"revenue of Apple", "revenue of Ford", "revenue of Tesla"}},
		{"Apple's stock price and Microsoft's net income", []string{"Apple's stock price", "Microsoft's net income"}},
		{"profit and loss statement of Apple", []string{"profit and loss statement of Apple"}},
		{"profit and loss statement", []string{"profit and loss statement"}},
		{"What were Apple's revenue and net income in 2021, and what was its profit margin?",
			[]string{"What were Apple's revenue and net income in 2021, and what was its profit margin?"}},
		{"Compare the 2022 revenue of AAPL, $msft, and Google, and determine which company achieved the highest revenue.",
			[]string{
				"Compare the 2022 revenue of AAPL, and determine which company achieved the highest revenue.",
				"Compare the 2022 revenue of $msft, and determine which company achieved the highest revenue.",
				"Compare the 2022 revenue of Google, and determine which company achieved the highest revenue.",
			}},
		{"AAPL vs MSFT price", []string{"AAPL price", "MSFT price"}},
		{"Apple and Ford's revenue", []string{"Apple's revenue", "Ford's revenue"}},
		// Names with "&" and "and" inside are one entity, not a list.
		{"Johnson & Johnson and Procter & Gamble net income", []string{"Johnson & Johnson net income", "Procter & Gamble net income"}},
		{"AT&T revenue", []string{"AT&T revenue"}},
		{"Bank of America and AT&T revenue", []string{"Bank of America revenue", "AT&T revenue"}},
		// The same company twice is not a list.
		{"Apple and AAPL price", []string{"Apple and AAPL price"}},
		// "target" in lower case is a word, not the company Target; "I" is not a ticker.
		{"I need the price target for Apple and Ford", []string{"I need the price target for Apple", "I need the price target for Ford"}},
		// A clause without an entity stays with the clause before it.
		{"revenue of Apple and net income of Ford plus their margins", []string{"revenue of Apple", "net income of Ford plus their margins"}},
		// Two lists: one intent per pair.
		{"Compare revenue of Apple and Ford and net income of GM and Tesla",
			[]string{"Compare revenue of Apple", "Compare revenue of Ford", "net income of GM", "net income of Tesla"}},
		{"", []string{""}},
	}
	for _, c := range cases {
		if got := h.Decompose(c.query); !slices.Equal(got, c.want) {
			t.Errorf("Decompose(%q)\n got %q\nwant %q", c.query, got, c.want)
		}
	}
}

func TestRewrite(t *testing.T) {
	h := NewHeuristic(demoAliases())
	cases := []struct{ query, want string }{
		{"AAPL rev 2021", "Apple revenue 2021"},
		{"$tsla px tgt", "Tesla price target"},
		{"Google's EPS and P/E", "Alphabet's earnings per share and price to earnings ratio"},
		{"F mkt cap yoy", "Ford Motor market cap year over year"},
		// Words that merely contain shorthand are left alone.
		{"reverse pxe divide", "reverse pxe divide"},
		// Tickers are case-sensitive: "ma" and "t" are not Mastercard and AT&T.
		{"ma and t", "ma and t"},
		{"MA and T", "Mastercard and AT&T"},
	}
	for _, c := range cases {
		if got := h.Rewrite(c.query); got != c.want {
			t.Errorf("Rewrite(%q) = %q, want %q", c.query, got, c.want)
		}
	}
}

func TestHeuristicModes(t *testing.T) {
	h := NewHeuristic(demoAliases())
	ctx := context.Background()
	q := "rev of AAPL and F"
	cases := []struct {
		mode Mode
		want []Intent
		rw   string
	}{
		{ModeNone, []Intent{{Query: q}}, q},
		{ModeRewrite, []Intent{{Query: "revenue of Apple and Ford Motor", Variants: []string{q}}}, "revenue of Apple and Ford Motor"},
		{ModeDecompose, []Intent{{Query: "rev of AAPL"}, {Query: "rev of F"}}, q},
		{ModeFull, []Intent{
			{Query: "revenue of Apple", Variants: []string{"rev of AAPL"}},
			{Query: "revenue of Ford Motor", Variants: []string{"rev of F"}},
		}, "revenue of Apple and Ford Motor"},
	}
	for _, c := range cases {
		p, err := h.Plan(ctx, q, c.mode)
		if err != nil {
			t.Fatal(err)
		}
		if p.Planner != NameHeuristic || p.Original != q || p.Rewritten != c.rw || p.Mode != c.mode || p.Fallback != "" {
			t.Errorf("%s: plan header %+v", c.mode, p)
		}
		if !slices.EqualFunc(p.Intents, c.want, func(a, b Intent) bool {
			return a.Query == b.Query && slices.Equal(a.Variants, b.Variants)
		}) {
			t.Errorf("%s: intents %+v, want %+v", c.mode, p.Intents, c.want)
		}
	}
}

// TestHeuristicUnknownMode: a mode that is not one of the four plans nothing.
func TestHeuristicUnknownMode(t *testing.T) {
	for _, m := range []Mode{"", "bogus"} {
		p, _ := NewHeuristic(demoAliases()).Plan(context.Background(), "AAPL and F", m)
		if p.Mode != ModeNone || len(p.Intents) != 1 || p.Intents[0].Query != "AAPL and F" {
			t.Errorf("mode %q: plan %+v", m, p)
		}
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": ModeNone, "none": ModeNone, "rewrite": ModeRewrite, "decompose": ModeDecompose, "full": ModeFull} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v", in, got, err)
		}
	}
	_, err := ParseMode("all")
	var me *ModeError
	if !errors.As(err, &me) || me.Mode != "all" {
		t.Errorf("ParseMode(all) error = %v", err)
	}
}

func TestMaxIntents(t *testing.T) {
	cs := dataset.DemoCompanies[:14]
	q := "price of "
	for i, c := range cs {
		if i > 0 {
			q += ", "
		}
		q += c.Name
	}
	if got := NewHeuristic(demoAliases()).Decompose(q); len(got) != MaxIntents {
		t.Errorf("%d intents, want %d", len(got), MaxIntents)
	}
}

// TestDatasetSplits runs the heuristic planner over the multi-company, multi-tool and
// multi-hop queries of the shipped ScaleMCP-style dataset, with the vocabulary of its
// 1,000 companies, and asserts how often the number of intents equals the number of
// companies in the gold tools, each intent naming one of them.
func TestDatasetSplits(t *testing.T) {
	ds, err := eval.Load("../../testdata/scalemcp-1000")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := dataset.Companies(1000)
	if err != nil {
		t.Fatal(err)
	}
	company := map[string]string{} // tool name → company
	for _, c := range cs {
		for _, tpl := range dataset.Templates {
			company[dataset.ToolName(c, tpl.Function)] = c.Name
		}
	}
	h := NewHeuristic(dataset.Aliases(cs))
	want := map[string]float64{dataset.KindMultiCompany: 0.95, dataset.KindMultiTool: 0.95, dataset.KindMultiHop: 0.9, dataset.KindSingle: 0.97}
	total, right := map[string]int{}, map[string]int{}
	for _, q := range ds.Queries {
		if _, ok := want[q.Kind]; !ok {
			continue
		}
		gold := map[string]bool{}
		for _, g := range q.Gold {
			gold[company[g]] = true
		}
		p, _ := h.Plan(context.Background(), q.Query, ModeFull)
		total[q.Kind]++
		covered := 0
		for c := range gold {
			if slices.ContainsFunc(p.Intents, func(in Intent) bool { return strings.Contains(in.Query, c) }) {
				covered++
			}
		}
		if len(p.Intents) == len(gold) && covered == len(gold) {
			right[q.Kind]++
		} else if testing.Verbose() {
			t.Logf("%s: %d companies, %d intents: %q → %q", q.Kind, len(gold), len(p.Intents), q.Query, p.Intents)
		}
	}
	for kind, min := range want {
		share := float64(right[kind]) / float64(total[kind])
		t.Logf("%s: %d of %d queries (%.1f%%) split into one intent per gold company", kind, right[kind], total[kind], 100*share)
		if total[kind] == 0 || share < min {
			t.Errorf("%s: share %.3f below %.2f", kind, share, min)
		}
	}
}

// Tasks cut from a longer request carry the whole request as a variant (their context);
// intents split by entity alone do not need it.
func TestPlanTasksCarryTheRequest(t *testing.T) {
	h := NewHeuristic(map[string]string{"AAPL": "Apple", "Ford": "Ford"})
	q := "Find the Gmail from DocuSign about the NDA. Then open it and forward it to Bob."
	p, _ := h.Plan(context.Background(), q, ModeDecompose)
	if len(p.Intents) < 2 {
		t.Fatalf("not split: %+v", p)
	}
	for _, in := range p.Intents {
		if len(in.Variants) != 1 || in.Variants[0] != q {
			t.Errorf("task %q: variants %q, want the request", in.Query, in.Variants)
		}
	}
	p, _ = h.Plan(context.Background(), "revenue of AAPL and Ford", ModeDecompose)
	if len(p.Intents) != 2 {
		t.Fatalf("entity split: %+v", p)
	}
	for _, in := range p.Intents {
		if len(in.Variants) != 0 {
			t.Errorf("entity intent %q: variants %q, want none", in.Query, in.Variants)
		}
	}
}
