package enrich

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/pgtest"
)

// TestJoinInitialWordsMatchesSQL: joinInitialWords is the Go twin of toolgate_name_words
// (sql/functions/lexical.sql): the heuristic writes a name's initials into its questions as
// the index writes them into the name's words, so both must agree. Each case runs through
// both.
func TestJoinInitialWordsMatchesSQL(t *testing.T) {
	t.Parallel()
	cases := []string{
		"get at t revenue", "get s p global net income", "get pg e", "get m t bank", "get c h robinson",
		"get j b hunt transport", "get bj s wholesale club", "get u s bancorp", "get dillard s revenue",
		"add to a list", "get a p stores", "i o", "get x y", "x", "", "at t", "get f n b corporation",
		"acme get weather", "s", "a b s", "ab cd", "get at t s", "v2 api x", "get w w grainger",
	}
	pool := pgtest.NewPool(t)
	rows, err := pool.Query(context.Background(), `SELECT c, toolgate_name_words(c) FROM unnest($1::text[]) AS c`, cases)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for rows.Next() {
		var in, out string
		if err := rows.Scan(&in, &out); err != nil {
			t.Fatal(err)
		}
		got[in] = out
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(cases) {
		t.Fatalf("PostgreSQL answered %d of %d cases", len(got), len(cases))
	}
	for _, in := range cases {
		if g := strings.Join(joinInitialWords(strings.Fields(in)), " "); g != got[in] {
			t.Errorf("name words of %q: Go %q, PostgreSQL %q", in, g, got[in])
		}
	}
	for in, want := range map[string]string{
		"get at t revenue":        "get att revenue",
		"get bj s wholesale club": "get bj s wholesale club",
		"add to a list":           "add to a list",
	} {
		if got[in] != want {
			t.Errorf("toolgate_name_words(%q) = %q, want %q", in, got[in], want)
		}
	}
}

// TestHeuristicJoinsInitials: the heuristic's questions and topics say a name of initials as
// one word ("att"), the word the index makes of "AT&T"; before, get_at_t_revenue's questions
// said "at t revenue", two words the analysis drops. A name without initials is unchanged.
func TestHeuristicJoinsInitials(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := Heuristic{}
	d := Document{Name: "get_at_t_revenue", Description: "Yearly revenue of AT&T."}
	qs, _, err := h.Questions(ctx, d, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(qs, func(q string) bool { return strings.Contains(q, "att revenue") }) ||
		slices.ContainsFunc(qs, func(q string) bool { return strings.Contains(q, "at t ") }) {
		t.Errorf("questions %q: want the name as \"att revenue\"", qs)
	}
	ts, _, err := h.Topics(ctx, d)
	if err != nil || len(ts) == 0 || ts[0] != "att revenue" {
		t.Errorf("topics %q (%v), want \"att revenue\" first", ts, err)
	}
	for name, want := range map[string]string{
		"get_at_t_revenue":        "att revenue",
		"getStockPrice":           "stock price",
		"add_to_a_list":           "to a list",
		"get_bj_s_wholesale_club": "bj wholesale club",
		"HTTPServerStatus":        "http server status",
	} {
		if got := shapeOf(Document{Name: name}).object; got != want {
			t.Errorf("object of %q = %q, want %q", name, got, want)
		}
	}
}
