package enrich

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/dataset"
)

func demoDoc(t *testing.T, name string) Document {
	t.Helper()
	for _, tl := range dataset.Tools(dataset.DemoCompanies[:1]) {
		if tl.Name == name {
			return NewDocument(tl.Name, tl.Title, tl.Description, tl.InputSchema)
		}
	}
	t.Fatalf("no demo tool %s", name)
	return Document{}
}

func TestHeuristicQuestions(t *testing.T) {
	ctx := context.Background()
	d := demoDoc(t, "get_apple_revenue")
	qs, u, err := Heuristic{}.Questions(ctx, d, 10)
	if err != nil || u != (Usage{}) {
		t.Fatal(err, u)
	}
	if len(qs) != 10 {
		t.Fatalf("%d questions: %v", len(qs), qs)
	}
	if !slices.Contains(qs, "What is Apple's total revenue for 2022?") {
		t.Fatalf("no year question in %v", qs)
	}
	seen := map[string]bool{}
	for _, q := range qs {
		if seen[strings.ToLower(q)] {
			t.Fatalf("repeated question %q", q)
		}
		seen[strings.ToLower(q)] = true
	}
	// enum values are used
	qs, _, _ = Heuristic{}.Questions(ctx, demoDoc(t, "get_apple_analyst_price_targets"), 10)
	joined := strings.Join(qs, "\n")
	for _, v := range []string{"target type current", "target type low"} {
		if !strings.Contains(joined, v) {
			t.Fatalf("enum value %q not used: %v", v, qs)
		}
	}
	if qs, _, _ := (Heuristic{}).Questions(ctx, d, 0); len(qs) != 0 {
		t.Fatal("questions with n=0")
	}
	// deterministic
	a, _, _ := Heuristic{}.Questions(ctx, d, 10)
	b, _, _ := Heuristic{}.Questions(ctx, d, 10)
	if !slices.Equal(a, b) {
		t.Fatal("not deterministic")
	}
}

func TestHeuristicProfileAndTopics(t *testing.T) {
	ctx := context.Background()
	for _, tl := range dataset.Tools(dataset.DemoCompanies[:3]) {
		d := NewDocument(tl.Name, tl.Title, tl.Description, tl.InputSchema)
		p, _, err := Heuristic{}.Profile(ctx, d)
		if err != nil {
			t.Fatalf("%s: %v", tl.Name, err)
		}
		if len(p.Tags) < 3 || len(p.Tags) > 5 || p.Function == "" {
			t.Fatalf("%s: %+v", tl.Name, p)
		}
		ts, _, err := Heuristic{}.Topics(ctx, d)
		if err != nil || len(ts) < 1 || len(ts) > MaxTopics {
			t.Fatalf("%s topics %v %v", tl.Name, ts, err)
		}
	}
	p, _, _ := Heuristic{}.Profile(ctx, demoDoc(t, "get_apple_net_income"))
	if p.Limitation != "If no year is specified, returns all available net income data." {
		t.Fatalf("limitation %q", p.Limitation)
	}
	// a bare tool still gets a valid profile
	p, _, err := Heuristic{}.Profile(ctx, NewDocument("x", "", "", nil))
	if err != nil || len(p.Tags) < 3 {
		t.Fatalf("bare tool: %+v %v", p, err)
	}
}

func TestComponents(t *testing.T) {
	d := demoDoc(t, "get_apple_stock_price_history")
	cs := Components(d, Outputs{
		Profile:   &Profile{Function: "F.", Tags: []string{"a", "b", "c"}, ExampleUsage: []Example{{Query: "q", APICall: "c()"}}},
		Questions: []string{"q1", "q2"},
		Topics:    []string{"t1", "t2"},
	})
	got := map[ComponentKey]string{}
	for _, c := range cs {
		got[c.Key()] = c.Text
	}
	want := map[ComponentKey]string{
		{"name", 0}: "get apple stock price history", {"question", 0}: "q1", {"question", 1}: "q2", {"topics", 0}: "t1; t2",
		{"profile_function", 0}: "F.", {"profile_tags", 0}: "a, b, c", {"profile_example_usage", 0}: "q c()",
		{"parameters", 0}: "timeline (d, w, m): Resolution of the history: d (daily), w (weekly) or m (monthly).",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%v = %q, want %q", k, got[k], v)
		}
	}
	if _, ok := got[ComponentKey{"profile_when_to_use", 0}]; ok {
		t.Error("empty when_to_use kept")
	}
	if c := got[ComponentKey{"concat", 0}]; strings.Contains(c, "c()") || !strings.Contains(c, "q2") || !strings.Contains(c, "Resolution") {
		t.Errorf("concat %q", c)
	}
}

func TestValidateProfile(t *testing.T) {
	p := &Profile{Function: " Gets prices ", Tags: []string{"Stock", "stock ", "price", "quote"}}
	if err := p.Validate(); err != nil || !slices.Equal(p.Tags, []string{"stock", "price", "quote"}) || p.Function != "Gets prices" {
		t.Fatalf("%+v %v", p, err)
	}
	for _, bad := range []*Profile{
		{Tags: []string{"a", "b", "c"}},
		{Function: "f", Tags: []string{"a", "b"}},
		{Function: "f", Tags: []string{"a", "b", "c", "d", "e", "f"}},
		{Function: "f", Tags: []string{"a", "b", "c"}, WhenToUse: strings.Repeat("w ", 50)},
	} {
		var me *MalformedOutputError
		if err := bad.Validate(); !errors.As(err, &me) {
			t.Errorf("%+v: want MalformedOutputError, got %v", bad, err)
		}
	}
}
