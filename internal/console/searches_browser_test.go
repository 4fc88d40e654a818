package console_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestConsoleFollowsAQueryToItsSearches: a query of Analytics links to its recent searches,
// and a search to what it returned and what the agent then did: the tool it reported, with
// its outcome, and the session's next search.
func TestConsoleFollowsAQueryToItsSearches(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	t.Parallel()
	st := newStack(t, true)
	const q = "send an email message"
	var first struct {
		SearchID int64 `json:"search_id"`
	}
	st.post(t, "/search", fmt.Sprintf(`{"query":%q,"session_id":"trace"}`, q), &first)
	st.post(t, fmt.Sprintf("/search/%d/feedback", first.SearchID), `{"tools":[{"name":"acme__send_email","success":false}]}`, nil)
	st.post(t, "/search", `{"query":"weather in Paris","session_id":"trace"}`, nil)
	st.post(t, "/search", fmt.Sprintf(`{"query":%q}`, q), nil)
	b := newBrowser(t)

	b.open(st.url+"/ui/analytics?days=7", "#an-top table")
	b.click(`//div[@id="an-top"]//a[@class="query"][text()="` + q + `"]`)
	b.wait("table.searches")
	if loc := b.location(); !strings.HasSuffix(loc, "/ui/searches?q=send+an+email+message&days=7") {
		t.Errorf("location of the query's searches: %s", loc)
	}
	ids := eval[[]string](b, `[...document.querySelectorAll('table.searches a.search-link')].map(a => a.textContent)`)
	if len(ids) != 2 || ids[1] != strconv.FormatInt(first.SearchID, 10) {
		t.Fatalf("searches of %q: %v, want 2, the first %d last", q, ids, first.SearchID)
	}
	if got := eval[string](b, `document.querySelectorAll('table.searches tbody tr')[1].textContent`); !strings.Contains(got, "used #1") || !strings.Contains(got, "trace") {
		t.Errorf("the labelled search in the list: %q", got)
	}
	b.shot("searches")

	b.click(`//table[contains(@class,"searches")]//a[text()="` + ids[1] + `"]`)
	b.wait("table.returned")
	if got := b.text("table.returned tbody tr:first-child"); !strings.Contains(got, "acme__send_email") || !strings.Contains(got, "reported") {
		t.Errorf("the first result: %q", got)
	}
	if got := b.text("table.labels tbody tr"); !strings.Contains(got, "acme__send_email") || !strings.Contains(got, "reported it (feedback)") || !strings.Contains(got, "failed") {
		t.Errorf("what the agent then did: %q", got)
	}
	if got := b.text("table.later tbody tr"); !strings.Contains(got, "weather in Paris") {
		t.Errorf("the session's next search: %q", got)
	}
	b.settled()
	b.shot("search-detail")
}
