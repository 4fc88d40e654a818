package plan

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/pgtext"
)

// FuzzHeuristic: any query gives 1 to MaxIntents intents, none empty unless the query is,
// and Merge-ready plans; the planner never panics on odd bytes or names.
func FuzzHeuristic(f *testing.F) {
	for _, s := range []string{
		"revenue of Apple, Ford and Tesla", "Apple's stock price and Microsoft's net income",
		"AT&T and J&J and P&G", "$", "$AAPL,$MSFT,and$F", "Apple’s and Ford’s", "rev px eps p/e",
		"BRK.B vs. Berkshire", ", and , and", "Johnson & Johnson & Johnson", "\xff\xfe Apple and \x00 Ford",
		"Get Apple's price. Then email it to Bob and book a flight to Paris.", "1) AAPL 2) F\n- Tesla",
	} {
		f.Add(s)
	}
	h := NewHeuristic(demoAliases())
	f.Fuzz(func(t *testing.T, q string) {
		for _, mode := range []Mode{ModeNone, ModeRewrite, ModeDecompose, ModeFull} {
			p, err := h.Plan(context.Background(), q, mode)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Intents) < 1 || len(p.Intents) > MaxIntents {
				t.Fatalf("%s %q: %d intents", mode, q, len(p.Intents))
			}
			for _, in := range p.Intents {
				if in.Query == "" && strings.TrimSpace(q) != "" {
					t.Fatalf("%s %q: empty intent in %+v", mode, q, p.Intents)
				}
			}
		}
	})
}

// FuzzSplitTasks: any query splits into nothing (one task) or 2 to MaxIntents pieces, each
// non-empty, trimmed and a substring of the query; the splitter never panics on odd bytes,
// unbalanced quotes or brackets, or runs of cue words.
func FuzzSplitTasks(f *testing.F) {
	for _, c := range taskCases {
		f.Add(c.query)
	}
	for _, s := range []string{
		"", "and", ", then", "1) 2) 3)", "1.", "- \n- \n-", "\"unclosed and send it", "(open and send a mail to Bob",
		"'it's' and 'send' a mail to Bob", "``` ``` and book a flight to X", "a;b;c; then; then send it to Y",
		"Send X to Y. Then\u2028book Z for W.", "e.g. U.S. v1.2. Then send a.pdf to B", "\xff and send \xfe to Bob",
		"Then, then, then send the report to Bob", "“quoted and” send the file to Ann and book a car for Ben",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		got := SplitTasks(q)
		if got == nil {
			return
		}
		if len(got) < 2 || len(got) > MaxIntents {
			t.Fatalf("%q: %d pieces %q", q, len(got), got)
		}
		for _, p := range got {
			if p == "" || p != strings.TrimSpace(p) || !strings.Contains(q, p) {
				t.Fatalf("%q: piece %q in %q", q, p, got)
			}
		}
	})
}

// FuzzParseLLM: any model answer is either a valid plan or a *MalformedError.
func FuzzParseLLM(f *testing.F) {
	for _, s := range []string{
		`{"rewritten":"a","intents":[{"query":"a","variants":["b"]}]}`, "```json\n{}\n```", `{"intents":null}`,
		`{"rewritten":"","intents":[{}]}`, `[]`, `null`, `"x"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, answer string) {
		for _, mode := range []Mode{ModeRewrite, ModeDecompose, ModeFull} {
			p, err := parseLLM("q", mode, answer)
			if err != nil {
				var me *MalformedError
				if !errors.As(err, &me) {
					t.Fatalf("error %T %v", err, err)
				}
				continue
			}
			if len(p.Intents) < 1 || len(p.Intents) > MaxIntents || p.Rewritten == "" {
				t.Fatalf("%s %q: invalid plan %+v", mode, answer, p)
			}
			for _, in := range p.Intents {
				if in.Query == "" || len(in.Variants) > MaxVariants {
					t.Fatalf("%s %q: invalid intent %+v", mode, answer, in)
				}
			}
		}
	})
}

// FuzzPlanTexts: whatever the planner's input — the query of a search request, and for the
// LLM planner the model's answer — every text of the plan it returns is one the search
// statement can run: valid UTF-8 without NUL (PostgreSQL text), not blank, trimmed. A query
// the search itself refuses never reaches a planner (search.normalize), so only those it
// accepts are planned here.
func FuzzPlanTexts(f *testing.F) {
	for _, s := range []struct{ query, answer string }{
		{"revenue of Apple, Ford and Tesla", `{"rewritten":"revenue of Apple, Ford and Tesla","intents":[{"query":"revenue of Apple","variants":["Apple revenue"]}]}`},
		{"rev px eps p/e of AAPL and $MSFT", `{"rewritten":"a\u0000b","intents":[{"query":"x"}]}`},
		{"Apple’s and Ford’s net inc", `{"rewritten":"ok","intents":[{"query":"\u0000","variants":["\u0000"]}]}`},
		{"AT&T vs. J&J, plus P&G; also BRK.B", `{"rewritten":"ok","intents":[{"query":"ok","variants":["fine","a\u0000"]}]}`},
		{"  spaced   query  ", "```json\n{\"rewritten\":\" r \",\"intents\":[{\"query\":\" q \",\"variants\":[\" v \"]}]}\n```"},
		{"x", `{"rewritten":"\ud800","intents":[{"query":"\udfff"}]}`},
	} {
		f.Add(s.query, s.answer)
	}
	h := NewHeuristic(demoAliases())
	f.Fuzz(func(t *testing.T, query, answer string) {
		if pgtext.Problem(query) != "" || strings.TrimSpace(query) == "" || utf8.RuneCountInString(query) > 2000 {
			return // refused by the search before any planning
		}
		for _, mode := range []Mode{ModeNone, ModeRewrite, ModeDecompose, ModeFull} {
			p, err := h.Plan(context.Background(), query, mode)
			if err != nil {
				t.Fatal(err)
			}
			checkPlanTexts(t, "heuristic", query, p)
			if mode == ModeNone {
				continue
			}
			if p, err := parseLLM(strings.TrimSpace(query), mode, answer); err == nil {
				checkPlanTexts(t, "llm answer "+strconv.Quote(answer), query, p)
			}
		}
	})
}

func checkPlanTexts(t *testing.T, planner, query string, p Plan) {
	t.Helper()
	if len(p.Intents) < 1 || len(p.Intents) > MaxIntents {
		t.Fatalf("%s %s %q: %d intents", planner, p.Mode, query, len(p.Intents))
	}
	texts := []string{p.Rewritten}
	for _, in := range p.Intents {
		texts = append(append(texts, in.Query), in.Variants...)
	}
	for _, s := range texts {
		if prob := pgtext.Problem(s); prob != "" || s == "" || s != strings.TrimSpace(s) {
			t.Fatalf("%s %s %q: plan text %q (%s) in %+v", planner, p.Mode, query, s, prob, p)
		}
	}
}
