package pgtext_test

import (
	"testing"

	"github.com/toolgate/toolgate/internal/pgtext"
)

func TestProblem(t *testing.T) {
	t.Parallel()
	for s, bad := range map[string]bool{
		"": false, "stock price": false, "prix de l'action €": false, "\t\n": false,
		"a\x00b": true, "\x00": true, "\xff": true, "caf\xc3": true, "\xed\xa0\x80": true, // a UTF-16 surrogate
	} {
		if got := pgtext.Problem(s) != ""; got != bad {
			t.Errorf("Problem(%q) = %q, want a problem: %v", s, pgtext.Problem(s), bad)
		}
	}
}

func TestStorable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"fine", 0, "fine"},
		{"a\x00b", 0, `a\x00b`},
		{"caf\xc3 \xff", 0, "caf\uFFFD \uFFFD"},
		{"abcdef", 5, "ab…"},
		{"ééé", 6, "ééé"},
		{"éééé", 6, "é…"},             // not cut inside a character
		{"a\x00bcdefgh", 8, `a\x00…`}, // escaped first, then cut
	} {
		got := pgtext.Storable(c.in, c.max)
		if got != c.want || pgtext.Problem(got) != "" || (c.max > 0 && len(got) > c.max) {
			t.Errorf("Storable(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}
