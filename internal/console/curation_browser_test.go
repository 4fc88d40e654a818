package console_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConsoleWhyNot: on the search page, the "Why not…?" field explains a tool the search
// did not return (its rank below k and its branches) and a name no tool has.
func TestConsoleWhyNot(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	t.Parallel()
	st := newStack(t, true)
	b := newBrowser(t)

	b.open(st.url+"/ui/search?q=weather+forecast+for+a+city&k=1", "#results li")
	if first := b.text("#results li .tool-name"); first != "acme__get_weather" {
		t.Fatalf("first result: %q", first)
	}
	b.do("ask why not", chromedp.SendKeys(chromedp.CSS("#whynot"), "acme__send_email"), chromedp.Click(chromedp.CSS("#whynot-go")))
	b.wait("#whynot-answer .why-line")
	if loc := b.location(); !strings.Contains(loc, "why=acme__send_email") || !strings.Contains(loc, "k=1") {
		t.Errorf("location after asking: %s", loc)
	}
	got := b.text("#whynot-answer")
	if !strings.Contains(got, "Why not acme__send_email?") || !strings.Contains(got, "ranked #") ||
		!strings.Contains(got, "below_k") || !strings.Contains(got, "vector") {
		t.Errorf("why not send_email: %q", got)
	}
	if n := eval[int](b, `document.querySelectorAll('#results li').length`); n != 1 {
		t.Errorf("%d results beside the answer, want the search's 1", n)
	}

	b.open(st.url+"/ui/search?q=weather&why=acme__nope", "#whynot-answer")
	if got := b.text("#whynot-answer"); !strings.Contains(got, "not ranked") || !strings.Contains(got, "not_found") {
		t.Errorf("why not a missing tool: %q", got)
	}
}
