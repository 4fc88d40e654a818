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
