package plan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/llm"
	"github.com/toolgate/toolgate/internal/pgtext"
	"github.com/toolgate/toolgate/internal/provider"
)

// MaxVariants bounds the variants kept per intent of an LLM plan.
const MaxVariants = 3

// maxQueryLen bounds a rewritten query or sub-query of an LLM plan, in bytes.
const maxQueryLen = 1000

// MalformedError is an LLM answer that is not the JSON plan the prompt asked for.
type MalformedError struct{ Reason string }

func (e *MalformedError) Error() string { return "malformed plan: " + e.Reason }

// Chat is the chat completion call the LLM planner needs; *llm.Client has it.
type Chat interface {
	Complete(ctx context.Context, messages []llm.Message, jsonMode bool) (llm.Result, error)
}

// LLM plans with a chat model and falls back to the heuristic plan, recording why in
// Plan.Fallback, when the model errs, times out or answers something that is not a valid
// plan.
type LLM struct {
	chat     Chat
	fallback *Heuristic
	timeout  time.Duration
}

// NewLLM makes the LLM planner. timeout bounds one planning call (TOOLGATE_PLAN_TIMEOUT).
func NewLLM(c Chat, fallback *Heuristic, timeout time.Duration) *LLM {
	return &LLM{chat: c, fallback: fallback, timeout: timeout}
}

// Plan asks the model for the plan of mode. It fails only when ctx itself is done; every
// other failure gives the heuristic plan with Fallback set.
func (l *LLM) Plan(ctx context.Context, query string, mode Mode) (Plan, error) {
	query = strings.TrimSpace(query)
	if mode == ModeNone || mode == "" {
		return l.fallback.plan(query, ModeNone), nil
	}
	p, err := l.ask(ctx, query, mode)
	if err == nil {
		return p, nil
	}
	if ctx.Err() != nil {
		return Plan{}, ctx.Err()
	}
	p = l.fallback.plan(query, mode)
	p.Fallback, p.Err = l.reason(err), err
	return p, nil
}

func (l *LLM) reason(err error) string {
	var pe *provider.ProviderError
	var rl *provider.RateLimitedError
	var br *provider.BadResponseError
	var me *MalformedError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("timeout after %s", l.timeout)
	case errors.As(err, &rl):
		return "provider error: rate limited"
	case errors.As(err, &pe) && pe.Status != 0:
		return fmt.Sprintf("provider error: status %d", pe.Status)
	case errors.As(err, &pe):
		return "provider error: unreachable"
	case errors.As(err, &br):
		return "provider error: bad response: " + br.Reason
	case errors.As(err, &me):
		return me.Error()
	}
	// Not the error's text: it quotes the provider's URL, which may carry a key, and this
	// reason is shown to the searching caller (the error itself is logged).
	return "provider error"
}

func (l *LLM) ask(ctx context.Context, query string, mode Mode) (Plan, error) {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	system := promptFull
	switch mode {
	case ModeRewrite:
		system = promptRewrite
	case ModeDecompose:
		system = promptDecompose
	}
	res, err := l.chat.Complete(ctx, []llm.Message{{Role: "system", Content: system}, {Role: "user", Content: userPrompt(query)}}, true)
	if err != nil {
		return Plan{}, err
	}
	return parseLLM(query, mode, res.Content)
}

type llmAnswer struct {
	Rewritten *string `json:"rewritten"`
	Intents   []struct {
		Query    *string  `json:"query"`
		Variants []string `json:"variants"`
	} `json:"intents"`
}

// parseLLM validates the model's answer against what mode asked for: a non-empty
// rewritten query (rewrite, full), 1 to MaxIntents non-empty sub-queries (decompose, full).
// Variants beyond MaxVariants, empty ones and repeats of the sub-query are dropped.
func parseLLM(query string, mode Mode, answer string) (Plan, error) {
	answer = llm.Unfence(answer)
	var a llmAnswer
	if err := json.Unmarshal([]byte(answer), &a); err != nil {
		return Plan{}, &MalformedError{Reason: "not a JSON plan: " + err.Error()}
	}
	p := Plan{Mode: mode, Original: query, Rewritten: query, Planner: NameLLM}
	if mode == ModeRewrite || mode == ModeFull {
		if a.Rewritten == nil {
			return Plan{}, &MalformedError{Reason: `no "rewritten" field`}
		}
		r, err := checkText("rewritten", *a.Rewritten)
		if err != nil {
			return Plan{}, err
		}
		p.Rewritten = r
	}
	if mode == ModeRewrite {
		p.Intents = single(query, p.Rewritten, mode, NameLLM).Intents
		return p, nil
	}
	if len(a.Intents) == 0 || len(a.Intents) > MaxIntents {
		return Plan{}, &MalformedError{Reason: fmt.Sprintf("%d intents, want 1 to %d", len(a.Intents), MaxIntents)}
	}
	for i, in := range a.Intents {
		if in.Query == nil {
			return Plan{}, &MalformedError{Reason: fmt.Sprintf(`intent %d has no "query"`, i)}
		}
		q, err := checkText(fmt.Sprintf("intent %d", i), *in.Query)
		if err != nil {
			return Plan{}, err
		}
		out := Intent{Query: q}
		if mode == ModeFull {
			for _, v := range in.Variants {
				v = strings.TrimSpace(v)
				if v != "" && v != q && len(v) <= maxQueryLen && pgtext.Problem(v) == "" && !slices.Contains(out.Variants, v) && len(out.Variants) < MaxVariants {
					out.Variants = append(out.Variants, v)
				}
			}
		}
		p.Intents = append(p.Intents, out)
	}
	return p, nil
}

// checkText trims a query the model wrote and refuses one the search cannot run: empty,
// too long, or not PostgreSQL text (a NUL, which JSON can carry as \u0000, would fail the
// search statement).
func checkText(field, s string) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", &MalformedError{Reason: field + " is empty"}
	case len(s) > maxQueryLen:
		return "", &MalformedError{Reason: fmt.Sprintf("%s is longer than %d bytes", field, maxQueryLen)}
	case pgtext.Problem(s) != "":
		return "", &MalformedError{Reason: field + " " + pgtext.Problem(s)}
	}
	return s, nil
}
