package plan

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// FuzzHeuristic: any query gives 1 to MaxIntents intents, none empty unless the query is,
// and Merge-ready plans; the planner never panics on odd bytes or names.
func FuzzHeuristic(f *testing.F) {
	for _, s := range []string{
		"revenue of Apple, Ford and Tesla", "Apple's stock price and Microsoft's net income",
		"AT&T and J&J and P&G", "$", "$AAPL,$MSFT,and$F", "Apple’s and Ford’s", "rev px eps p/e",
		"BRK.B vs. Berkshire", ", and , and", "Johnson & Johnson & Johnson", "\xff\xfe Apple and \x00 Ford",
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
