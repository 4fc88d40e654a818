package search

import (
	"slices"
	"testing"
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

func TestNameKeyMatchesSQL(t *testing.T) {
	// the cases of toolgate_name_key (migrations/0004_search.up.sql)
	for in, want := range map[string]string{
		"acme__get_weather": "acme get weather",
		"sendEmail":         "send email",
		"HTTPServer2Go":     "httpserver2 go",
		"  --a--b--  ":      "a b",
		"Ünïcode_name":      "n code name",
	} {
		if got := nameKey(in); got != want {
			t.Errorf("nameKey(%q) = %q, want %q", in, got, want)
		}
	}
}
