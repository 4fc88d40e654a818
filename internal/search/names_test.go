package search

import (
	"context"
	"slices"
	"testing"

	"github.com/toolgate/toolgate/internal/pgtest"
)

func TestNameKeys(t *testing.T) {
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"get_weather", []string{"get weather"}},
		{"getWeather", []string{"get weather"}},
		{"beta__get_weather", []string{"beta get weather"}},
		{"please call getWeather for the latest stock price", []string{"get weather", "get weather for latest stock price"}},
		{"run `list files` now", []string{"list files", "list files now"}},
		{"list-files in /tmp", []string{"list files", "list files in tmp"}},
		{"Use the search tool", []string{"search"}},
		{"get weather", []string{"get weather"}},
		{"what time is it right now", []string{"what time is it right now"}},
		{"local currency of Peru", []string{"local currency of peru"}},
		{"search engines for the U.S. market", []string{"u s", "search engines for u s market"}},
		{"the tool", nil},
		{"", nil},
	} {
		if got := nameKeys(c.query); !slices.Equal(got, c.want) {
			t.Errorf("nameKeys(%q) = %q, want %q", c.query, got, c.want)
		}
	}
}

// nameKey is the Go twin of toolgate_name_key (sql/functions/lexical.sql): the index stores
// the SQL keys and the search compares the Go keys of a query with them, so both must agree on
// every input. Each case runs through PostgreSQL's function and Go's.
func TestNameKeyMatchesSQL(t *testing.T) {
	t.Parallel()
	cases := []string{
		"acme__get_weather", "sendEmail", "HTTPServer2Go", "  --a--b--  ", "Ünïcode_name",
		"", "get weather", "files.read", "list-files", "a1B2C", "aBcD", "getURLForID",
		"ALLCAPS", "snake_case_name", "kebab-case-name", "mixed_Case-andCamel", "tab\tand\nnewline",
		"éclair_getÉtat", "x__y__z", "123abc", "abc123Def", "__leading", "trailing__",
		"日本語ツール_run", "emoji🙂Tool", "ÀÉÎõü", "ß_straße", "dot.separated.name", "a  b",
		"weather", "abc123", "7", // plain words: returned as they are
	}
	pool := pgtest.NewPool(t)
	rows, err := pool.Query(context.Background(),
		`SELECT c, toolgate_name_key(c) FROM unnest($1::text[]) AS c`, cases)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for rows.Next() {
		var in, key string
		if err := rows.Scan(&in, &key); err != nil {
			t.Fatal(err)
		}
		got[in] = key
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(cases) {
		t.Fatalf("PostgreSQL answered %d of %d cases", len(got), len(cases))
	}
	for _, in := range cases {
		if nameKey(in) != got[in] {
			t.Errorf("name key of %q: Go %q, PostgreSQL %q", in, nameKey(in), got[in])
		}
	}
	// and a few by hand, so a change both sides share is still seen
	for in, want := range map[string]string{
		"acme__get_weather": "acme get weather",
		"sendEmail":         "send email",
		"HTTPServer2Go":     "httpserver2 go",
		"  --a--b--  ":      "a b",
		"Ünïcode_name":      "n code name",
	} {
		if got[in] != want {
			t.Errorf("toolgate_name_key(%q) = %q, want %q", in, got[in], want)
		}
	}
}
