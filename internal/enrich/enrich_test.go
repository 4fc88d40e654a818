package enrich

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

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

// Repair brings a profile within the rules and says what it changed; only a profile
// without a function cannot be repaired.
func TestRepairProfile(t *testing.T) {
	p := &Profile{Function: " Gets prices ", Tags: []string{"Stock", "stock ", "price", "quote"}}
	if notes, err := p.Repair(); err != nil || len(notes) != 0 || !slices.Equal(p.Tags, []string{"stock", "price", "quote"}) || p.Function != "Gets prices" {
		t.Fatalf("%+v %v %q", p, err, notes)
	}
	for _, tc := range []struct {
		p     Profile
		notes []string
		check func(Profile) bool
	}{
		{Profile{Function: "f", Tags: []string{"a", "b"}}, []string{"2 distinct tags, 3 to 5 asked for"},
			func(p Profile) bool { return len(p.Tags) == 2 }},
		{Profile{Function: "f", Tags: []string{"a", "b", "c", "d", "e", "f"}}, []string{"6 tags, the first 5 kept"},
			func(p Profile) bool { return slices.Equal(p.Tags, []string{"a", "b", "c", "d", "e"}) }},
		{Profile{Function: "f", Tags: []string{"a", "b", "c"}, WhenToUse: strings.Repeat("w ", 50)}, []string{"when_to_use cut to 40 words"},
			func(p Profile) bool { return len(strings.Fields(p.WhenToUse)) == 40 }},
		{Profile{Function: "f", Tags: []string{"a", "b", strings.Repeat("long ", 20)}}, []string{`tag "` + strings.TrimSpace(strings.Repeat("long ", 20)) + `" cut to 48 characters`},
			func(p Profile) bool { return utf8.RuneCountInString(p.Tags[2]) <= 48 }},
		{Profile{Function: "f", Tags: []string{"a", "b", "c"}, ExampleUsage: []Example{{Query: " "}, {Query: "q1"}, {Query: "q2"}, {Query: "q3"}}},
			[]string{"example_usage entry without a query dropped"},
			func(p Profile) bool { return len(p.ExampleUsage) == 2 && p.ExampleUsage[0].Query == "q1" }},
	} {
		notes, err := tc.p.Repair()
		if err != nil || !slices.Equal(notes, tc.notes) || !tc.check(tc.p) {
			t.Errorf("%+v: notes %q, err %v; want notes %q", tc.p, notes, err, tc.notes)
		}
	}
	var me *MalformedOutputError
	if _, err := (&Profile{Function: "  ", Tags: []string{"a", "b", "c"}}).Repair(); !errors.As(err, &me) || me.Reason != "function is missing" {
		t.Errorf("no function: %v, want MalformedOutputError", err)
	}
}
