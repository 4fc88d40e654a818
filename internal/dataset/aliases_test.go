package dataset

import "testing"

func TestAliases(t *testing.T) {
	m := Aliases(DemoCompanies)
	for surface, want := range map[string]string{"AAPL": "Apple", "Apple": "Apple", "Google": "Alphabet", "BRK.B": "Berkshire Hathaway", "J&J": "Johnson & Johnson"} {
		if m[surface] != want {
			t.Errorf("Aliases[%q] = %q, want %q", surface, m[surface], want)
		}
	}
}
