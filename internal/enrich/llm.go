package enrich

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/internal/llm"
)

// LLM is the enricher backed by an OpenAI-compatible chat completions model.
type LLM struct {
	client *llm.Client
	// Judge makes a second call that checks a generated profile's faithfulness to the
	// original document (Tool-DE step 2); a failed judgement regenerates once, then keeps
	// the original document only.
	Judge bool
}

// NewLLM returns the LLM-backed enricher.
func NewLLM(c *llm.Client, judge bool) *LLM { return &LLM{client: c, Judge: judge} }

// Model is "openai:<model>", with "+judge" when profiles are judged (judged and unjudged
// outputs are different products).
func (e *LLM) Model() string {
	m := "openai:" + e.client.Model()
	if e.Judge {
		m += "+judge"
	}
	return m
}

// profilePrompt adapts the Tool-DE generation prompt (seed 004, appendix B.1) to JSON mode.
const profilePrompt = `You will receive a copy of the API documentation.
Your tasks are strictly based on this API. A new "tool_profile" field is added to the documentation.
The goal is to make the overall documentation more accurate and complete, but not inconsistent.

## Required fields (always included in tool_profile)
- "function": less than 20 words; clearly describe the tool's main function using real terms.
- "tags": 3-5 lowercase keywords or short phrases; no repetition or self-contradiction; covering the main topic, primary operations and synonyms.

## Optional fields (included only if explicitly supported by the original documentation)
- "when_to_use": less than 20 words; actual usage scenarios.
- "example_usage": at most 2 items, only if the example can be constructed directly from the fields of the original document. Each item has "query" (a natural or keyword question) and "api_call" (a call consistent with the tool's actual parameters).
- "limitation": only if the original document explicitly mentions limitations, rate limits or special conditions.

## Important rules
- Absolutely no fiction: do not add functions, parameters, outputs, limitations or fields that do not exist in the original document.
- Consistency: stick to the domain of the document.
- If an optional field is not explicitly supported, omit it.
- Output only one JSON object: {"tool_profile": {"function": "...", "tags": ["..."], "when_to_use": "...", "example_usage": [{"query": "...", "api_call": "..."}], "limitation": "..."}}`

// judgePrompt adapts the Tool-DE judgement prompt (seed 004, appendix B.2) to JSON mode.
const judgePrompt = `You will receive two inputs:
(1) The original API documentation.
(2) An expanded "tool_profile" derived from the documentation.

Your task is to judge whether the tool_profile is consistent with the original documentation.

## Field definitions
- "function": the main purpose of the tool.
- "tags": keywords describing the domain and usage.
- "when_to_use": scenarios where the tool should be applied.
- "example_usage": example queries and corresponding API calls.
- "limitation": constraints explicitly mentioned in the original documentation.

## Important rule
- Do not invent or assume information. Base your judgement only on the given API documentation.

Output only one JSON object: {"consistent": true} if the tool_profile is consistent, otherwise {"consistent": false}.`

const questionsPrompt = `You will receive the documentation of one tool (API). Write %d different requests that real users would type to an assistant and that this tool answers.

Rules:
- Ground every request in the documentation only; do not invent capabilities.
- Make them diverse: questions, commands and keyword queries; different wordings and synonyms; concrete argument values taken from the parameters (use enum values where given).
- Do not mention the tool's name or the word "tool".
- Output only one JSON object: {"questions": ["...", "..."]}`

const topicsPrompt = `You will receive the documentation of one tool (API). List 1 to 10 key topics or user intents this tool serves, each a short phrase of at most 6 words, grounded in the documentation only.
Output only one JSON object: {"topics": ["...", "..."]}`

func (e *LLM) ask(ctx context.Context, system, user string, out any, step string) (Usage, error) {
	res, err := e.client.Complete(ctx, []llm.Message{{Role: "system", Content: system}, {Role: "user", Content: user}}, true)
	u := Usage{PromptTokens: res.PromptTokens, CompletionTokens: res.CompletionTokens}
	if err != nil {
		return u, err
	}
	dec := json.NewDecoder(strings.NewReader(llm.Unfence(res.Content)))
	if err := dec.Decode(out); err != nil {
		return u, &MalformedOutputError{Step: step, Reason: "not a JSON object: " + err.Error()}
	}
	return u, nil
}

func (e *LLM) generateProfile(ctx context.Context, d Document) (*Profile, Usage, error) {
	var out struct {
		ToolProfile *Profile `json:"tool_profile"`
	}
	u, err := e.ask(ctx, profilePrompt, "The tool_profile is now generated for the following API:\n\n"+d.JSON(), &out, StepProfile)
	if err != nil {
		return nil, u, err
	}
	if out.ToolProfile == nil {
		return nil, u, &MalformedOutputError{Step: StepProfile, Reason: "tool_profile is missing"}
	}
	// Service repairs it (Profile.Repair), recording what it cut; one without a function
	// cannot be judged or repaired.
	if strings.TrimSpace(out.ToolProfile.Function) == "" {
		return nil, u, &MalformedOutputError{Step: StepProfile, Reason: "function is missing"}
	}
	return out.ToolProfile, u, nil
}

func (e *LLM) judge(ctx context.Context, d Document, p *Profile) (bool, Usage, error) {
	pj, _ := json.MarshalIndent(map[string]any{"tool_profile": p}, "", "  ")
	var out struct {
		Consistent *bool `json:"consistent"`
	}
	u, err := e.ask(ctx, judgePrompt, fmt.Sprintf("(1) Original API documentation:\n%s\n\n(2) tool_profile:\n%s", d.JSON(), pj), &out, StepProfile)
	if err != nil {
		return false, u, err
	}
	if out.Consistent == nil {
		return false, u, &MalformedOutputError{Step: StepProfile, Reason: `judgement without "consistent"`}
	}
	return *out.Consistent, u, nil
}

// Profile implements Enricher: generate, validate, judge when enabled; a failed judgement
// regenerates once, and a second failure keeps the original document only (nil profile).
func (e *LLM) Profile(ctx context.Context, d Document) (*Profile, Usage, error) {
	var total Usage
	for attempt := 0; attempt < 2; attempt++ {
		p, u, err := e.generateProfile(ctx, d)
		total = total.Add(u)
		if err != nil {
			return nil, total, err
		}
		if !e.Judge {
			return p, total, nil
		}
		ok, u, err := e.judge(ctx, d, p)
		total = total.Add(u)
		if err != nil {
			return nil, total, err
		}
		if ok {
			return p, total, nil
		}
	}
	return nil, total, nil
}

// Questions implements Enricher.
func (e *LLM) Questions(ctx context.Context, d Document, n int) ([]string, Usage, error) {
	if n <= 0 {
		return nil, Usage{}, nil
	}
	var out struct {
		Questions []string `json:"questions"`
	}
	u, err := e.ask(ctx, fmt.Sprintf(questionsPrompt, n), d.JSON(), &out, StepQuestions)
	if err != nil {
		return nil, u, err
	}
	// Service repairs the list (RepairQuestions), recording what it cut or dropped.
	return out.Questions, u, nil
}

// Topics implements Enricher.
func (e *LLM) Topics(ctx context.Context, d Document) ([]string, Usage, error) {
	var out struct {
		Topics []string `json:"topics"`
	}
	u, err := e.ask(ctx, topicsPrompt, d.JSON(), &out, StepTopics)
	if err != nil {
		return nil, u, err
	}
	// Service repairs the list (RepairTopics), recording what it cut or dropped.
	return out.Topics, u, nil
}
