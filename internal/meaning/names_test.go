package meaning_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/meaning"
)

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		// capitalised inside prose, never lowercase: names, also where the identifier repeats
		// them; a namespace the text does not write ("demo") is no name
		{"demo__get_cullen_frost_bankers_current_stock_price Return the most recent trading price for Cullen/Frost Bankers's stock, or -1 if unavailable.",
			[]string{"bankers", "cullen", "frost"}},
		{"get_allison_transmission_revenue Get Allison Transmission's total revenue by year.", []string{"allison", "transmission"}},
		{"get_apple_net_income Get Apple's net income by year. If no year is specified, returns all available net income data.", []string{"apple"}},
		// a Title Case heading is no evidence; a word also used in lowercase is no name
		{"github__create_pull_request Create Pull Request\nCreate a new pull request in a GitHub repository.", []string{"git", "hub"}},
		// a namespace the text capitalises is a name; one it never writes is a common word
		{"notion__API-delete-a-block Notion | Delete a block", []string{"notion"}},
		{"memory__search_nodes Search for nodes in the knowledge graph based on a query.", nil},
		{"git__git_status Shows the working tree status.", []string{"git"}},
		{"email__send_email Send an email through the SMTP server. The email is queued.", []string{"smtp"}},
		// the first word of a sentence, a bullet or a clause after a colon is evidence neither way
		{"Weather forecast for a city.\n- Forecast: Daily highs.\nNote: Uses the Open-Meteo service.", []string{"meteo", "open"}},
		// identifiers and paths are no prose
		{"Reads /etc/Hosts and the fileName field of `Config.Path`.", nil},
	} {
		got := slices.Sorted(maps.Keys(meaning.Names(tc.text)))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: names %v, want %v", tc.text, got, tc.want)
		}
	}
}

// A text's meaning leaves its names out: the tool of a bank called Frost has nothing of
// frost's senses (weather, ice), the one of a gearbox maker called Allison Transmission
// nothing of transmission's (sending, communication), the one of Apple nothing of fruit;
// the same words in lowercase prose keep theirs.
func TestVectorLeavesNamesOut(t *testing.T) {
	s := space(t)
	for _, tc := range []struct{ tool, name string }{
		{"demo__get_cullen_frost_bankers_current_stock_price\nReturn the most recent trading price for Cullen/Frost Bankers's stock, or -1 if unavailable.", "frost"},
		{"demo__get_allison_transmission_net_income\nGet Allison Transmission's net income by year. If no year is specified, returns all available net income data.", "transmission"},
		{"demo__get_apple_revenue\nGet Apple's total revenue by year. If no year is provided, returns all available revenue data.", "apple"},
	} {
		name := vector(t, s, tc.name)
		if c := cosine(vector(t, s, tc.tool), name); c != 0 {
			t.Errorf("%q has %.3f of the meaning of %q", tc.tool, c, tc.name)
		}
		prose := strings.ReplaceAll(strings.ToLower(tc.tool), "'s", "")
		if c := cosine(vector(t, s, prose), name); c == 0 {
			t.Errorf("%q has nothing of %q", prose, tc.name)
		}
	}
}

// A name meets the same name: a request for "our tracker Linear" shares the name's term
// with the Linear server's tools, and little with a text about lines, which it shared the
// senses of linear with before names stood for themselves.
func TestNamesMeetNames(t *testing.T) {
	s := space(t)
	q := vector(t, s, "file it in Linear")
	tool := cosine(q, vector(t, s, "linear__create_issue\nCreate a new issue in Linear."))
	lines := cosine(q, vector(t, s, "a linear trend"))
	if tool < 0.1 || lines > 0.02 {
		t.Errorf("cosine with the Linear tool %.3f, with a text about lines %.3f", tool, lines)
	}
}
