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
	b.settled()
	b.shot("search-whynot")

	b.open(st.url+"/ui/search?q=weather&why=acme__nope", "#whynot-answer")
	if got := b.text("#whynot-answer"); !strings.Contains(got, "not ranked") || !strings.Contains(got, "not_found") {
		t.Errorf("why not a missing tool: %q", got)
	}
}

// TestConsoleRules: a pin created on the rules page puts its tool first in the playground,
// with the rule in its explanation; deleting it, after a confirmation, restores the
// ranking.
func TestConsoleRules(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	t.Parallel()
	st := newStack(t, true)
	b := newBrowser(t)

	b.open(st.url+"/ui/search?q=weather+forecast", "#results li")
	if first := b.text("#results li .tool-name"); first != "acme__get_weather" {
		t.Fatalf("first result before the pin: %q", first)
	}
	b.open(st.url+"/ui/rules", "#rule-form")
	b.wait("#rules .empty")
	b.do("create a pin", chromedp.SetValue(chromedp.CSS("#rule-match"), "contains"),
		chromedp.SendKeys(chromedp.CSS("#rule-pattern"), "forecast"),
		chromedp.SetValue(chromedp.CSS("#rule-action"), "pin"),
		chromedp.SendKeys(chromedp.CSS("#rule-tool"), "acme__send_email"),
		chromedp.Click(chromedp.CSS("#rule-create")))
	b.wait(`//div[@id="status"]/div[contains(., "pin acme__send_email for contains")]`)
	b.wait(`#rules button.delete-rule`)
	b.settled()
	b.shot("rules")

	b.open(st.url+"/ui/search?q=weather+forecast", "#results li")
	if first := b.text("#results li .tool-name"); first != "acme__send_email" {
		t.Errorf("first result with the pin: %q", first)
	}
	b.wait("#results li:first-child .explanation .rule")
	if got := b.text("#results li:first-child .explanation .rule"); !strings.Contains(got, "pinned at #1") {
		t.Errorf("the pinned tool's explanation: %q", got)
	}

	b.open(st.url+"/ui/rules", "#rules button.delete-rule")
	b.click("#rules button.delete-rule")
	b.click("button.confirm")
	b.wait(`//div[@id="status"]/div[contains(., "deleted.")]`)
	b.wait("#rules .empty")
	b.open(st.url+"/ui/search?q=weather+forecast", "#results li")
	if first := b.text("#results li .tool-name"); first != "acme__get_weather" {
		t.Errorf("first result after the rule was deleted: %q", first)
	}
}
