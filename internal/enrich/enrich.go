// Package enrich expands a tool's document so that more requests find it: a Tool-DE
// tool_profile (seed 004), synthetic user questions and key topics (seeds 000 and 001),
// produced by an LLM or by the built-in heuristic enricher, and the split of the expanded
// document into the components that are embedded one by one. Service (tool.go) enriches a
// stored tool: the outputs, the embedding of its changed components and its TDWA vectors,
// written in one transaction; it is the enrich_tool job's work.
package enrich

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Steps of enrichment, as stored in tool_enrichments.step.
const (
	StepProfile   = "profile"
	StepQuestions = "questions"
	StepTopics    = "topics"
)

// Usage is what a step cost at the provider; zero for the heuristic enricher.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{u.PromptTokens + o.PromptTokens, u.CompletionTokens + o.CompletionTokens}
}

// Enricher produces the three enrichment outputs of a tool document.
type Enricher interface {
	// Model names the producer ("heuristic-v1", "openai:gpt-4o-mini"); outputs are keyed by
	// it, so changing it re-enriches every tool.
	Model() string
	// Profile expands the document into a Tool-DE tool_profile. A nil profile means the
	// original document is kept alone (the generated one failed its faithfulness check).
	Profile(ctx context.Context, d Document) (*Profile, Usage, error)
	// Questions writes up to n distinct requests a user might make that this tool answers.
	// Service repairs the list (RepairQuestions): an over-long or repeated entry costs
	// that entry only.
	Questions(ctx context.Context, d Document, n int) ([]string, Usage, error)
	// Topics lists 1–10 short key topics or intents of the tool (repaired by RepairTopics).
	Topics(ctx context.Context, d Document) ([]string, Usage, error)
}

// Profile is the Tool-DE tool_profile.
type Profile struct {
	Function     string    `json:"function"`
	Tags         []string  `json:"tags"`
	WhenToUse    string    `json:"when_to_use,omitempty"`
	Limitation   string    `json:"limitation,omitempty"`
	ExampleUsage []Example `json:"example_usage,omitempty"`
}

// Example is one example_usage entry.
type Example struct {
	Query   string `json:"query"`
	APICall string `json:"api_call,omitempty"`
}

// Limits on generated outputs. The prompt asks for under 20 words per sentence field; the
// checks allow some slack so that a 21-word answer is not thrown away. Lengths are counted
// in characters (runes), not bytes: a CJK character takes three bytes, and a byte limit
// would hold Chinese or Japanese text to a third of what it allows English.
const (
	maxSentenceWords = 40
	// maxSentenceChars bounds a sentence field written without spaces (Chinese, Japanese),
	// which counts as one word.
	maxSentenceChars = 400
	maxTagLen        = 48
	minTags          = 3
	maxTags          = 5
	maxQuestionLen   = 300
	maxTopicWords    = 8
	// maxTopicChars bounds a topic written without spaces, one "word" whatever its length.
	maxTopicChars = 80
	MaxTopics     = 10
	MaxQuestions  = 50
)

// MalformedOutputError is a generated output that is not what was asked for: unparsable
// JSON, a missing field or a field over its limit. Nothing of it is stored.
type MalformedOutputError struct {
	Step   string
	Reason string
}

func (e *MalformedOutputError) Error() string {
	return fmt.Sprintf("enrichment %s: malformed output: %s", e.Step, e.Reason)
}

// Repair brings a profile within the Tool-DE rules and returns what it changed: fields
// trimmed, a sentence field over maxSentenceWords words or maxSentenceChars characters cut,
// tags lowercased, deduplicated, cut to maxTagLen characters and to at most maxTags (fewer
// than minTags are kept, with a note), at most two examples, and those without a query
// dropped. Only a profile without a function is a MalformedOutputError: there is nothing
// to repair it from.
func (p *Profile) Repair() ([]string, error) {
	var notes []string
	note := func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }
	for _, f := range []struct {
		name string
		s    *string
	}{{"function", &p.Function}, {"when_to_use", &p.WhenToUse}, {"limitation", &p.Limitation}} {
		s := strings.Join(strings.Fields(strings.ToValidUTF8(*f.s, "")), " ")
		if w := strings.Fields(s); len(w) > maxSentenceWords {
			s = strings.Join(w[:maxSentenceWords], " ")
			note("%s cut to %d words", f.name, maxSentenceWords)
		}
		if utf8.RuneCountInString(s) > maxSentenceChars {
			s = CutRunes(s, maxSentenceChars)
			note("%s cut to %d characters", f.name, maxSentenceChars)
		}
		*f.s = s
	}
	if p.Function == "" {
		return notes, &MalformedOutputError{Step: StepProfile, Reason: "function is missing"}
	}
	tags := make([]string, 0, len(p.Tags))
	seen := map[string]bool{}
	for _, t := range p.Tags {
		t = strings.ToLower(strings.Join(strings.Fields(strings.ToValidUTF8(t, "")), " "))
		if utf8.RuneCountInString(t) > maxTagLen {
			note("tag %q cut to %d characters", t, maxTagLen)
			t = CutRunes(t, maxTagLen)
		}
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		tags = append(tags, t)
	}
	if len(tags) > maxTags {
		note("%d tags, the first %d kept", len(tags), maxTags)
		tags = tags[:maxTags]
	}
	if len(tags) < minTags {
		note("%d distinct tags, %d to %d asked for", len(tags), minTags, maxTags)
	}
	p.Tags = tags
	examples := p.ExampleUsage[:0]
	for _, e := range p.ExampleUsage {
		if strings.TrimSpace(e.Query) == "" {
			note("example_usage entry without a query dropped")
			continue
		}
		examples = append(examples, e)
	}
	p.ExampleUsage = examples[:min(len(examples), 2)]
	return notes, nil
}

// repairList trims and collapses the spaces of each entry, drops empty and repeated
// (case-insensitively) ones, and passes the rest through fix, which returns the entry as
// kept (empty to drop it) and, when it changed or dropped it, why. The notes say what was
// repaired or dropped, so that one bad entry among good ones costs that entry only.
func repairList(in []string, fix func(string) (string, string)) (out, notes []string) {
	out = make([]string, 0, len(in))
	seen := map[string]bool{}
	for _, s := range in {
		if !utf8.ValidString(s) {
			// a model can emit a cut multi-byte sequence; what remains is still usable
			s = strings.ToValidUTF8(s, "")
			notes = append(notes, fmt.Sprintf("invalid UTF-8 removed from %q", s))
		}
		s = strings.Join(strings.Fields(s), " ")
		if s == "" {
			continue
		}
		fixed, note := fix(s)
		if note != "" {
			notes = append(notes, note)
		}
		k := strings.ToLower(fixed)
		if fixed == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, fixed)
	}
	return out, notes
}

// clauseMarks end a clause or sentence, in ASCII and as the CJK scripts write them
// (ideographic full stop and comma, enumeration comma, full-width marks).
const clauseMarks = ".,;:!?。，、；：！？．"

// CutRunes shortens s to at most max characters, never inside a UTF-8 sequence: at the
// last clause mark or space of the allowed part when that keeps at least half of it, else
// at the character limit.
func CutRunes(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	rs := []rune(s)[:max]
	cut := len(rs)
	for i := len(rs) - 1; i >= max/2; i-- {
		if strings.ContainsRune(clauseMarks, rs[i]) {
			cut = i + 1
			break
		}
		if unicode.IsSpace(rs[i]) {
			cut = i
			break
		}
	}
	return strings.TrimSpace(string(rs[:cut]))
}

// RepairQuestions normalizes generated questions, keeping at most n: a question over the
// length limit is cut at a clause or character boundary. The notes say what was repaired.
// Only a list with no usable question is a MalformedOutputError.
func RepairQuestions(in []string, n int) ([]string, []string, error) {
	out, notes := repairList(in, func(s string) (string, string) {
		if utf8.RuneCountInString(s) <= maxQuestionLen {
			return s, ""
		}
		c := CutRunes(s, maxQuestionLen)
		return c, fmt.Sprintf("question cut to %d characters: %q", maxQuestionLen, c)
	})
	if len(out) == 0 && n > 0 {
		return nil, notes, &MalformedOutputError{Step: StepQuestions, Reason: "no questions"}
	}
	return out[:min(len(out), n)], notes, nil
}

// CleanQuestions is RepairQuestions without the notes.
func CleanQuestions(in []string, n int) ([]string, error) {
	out, _, err := RepairQuestions(in, n)
	return out, err
}

// RepairTopics normalizes generated topics, keeping at most MaxTopics: a topic over the
// word limit keeps its first words, one over the character limit (CJK text has no spaces)
// is cut at a clause or character boundary. The notes say what was repaired. Only a list with no
// usable topic is a MalformedOutputError.
func RepairTopics(in []string) ([]string, []string, error) {
	out, notes := repairList(in, func(s string) (string, string) {
		f := strings.Fields(s)
		switch {
		case len(f) > maxTopicWords:
			c := strings.Join(f[:maxTopicWords], " ")
			return CutRunes(c, maxTopicChars), fmt.Sprintf("topic %q cut to %d words", s, maxTopicWords)
		case utf8.RuneCountInString(s) > maxTopicChars:
			c := CutRunes(s, maxTopicChars)
			return c, fmt.Sprintf("topic %q cut to %d characters", s, maxTopicChars)
		}
		return s, ""
	})
	if len(out) == 0 {
		return nil, notes, &MalformedOutputError{Step: StepTopics, Reason: "no topics"}
	}
	return out[:min(len(out), MaxTopics)], notes, nil
}

// CleanTopics is RepairTopics without the notes.
func CleanTopics(in []string) ([]string, error) {
	out, _, err := RepairTopics(in)
	return out, err
}

// Document is the original tool document that every output must be grounded in.
type Document struct {
	Name        string // the tool's own name, e.g. get_apple_revenue
	Title       string
	Description string
	Params      []Param
}

// Param is one argument of the tool.
type Param struct {
	Name        string   `json:"name"`
	Type        string   `json:"type,omitempty"`
	Description string   `json:"description,omitempty"`
	Enum        []string `json:"enum,omitempty"`
	Required    bool     `json:"required,omitempty"`
}

// NewDocument reads a tool definition. The parameters are the input schema's top-level
// properties in name order; a schema that does not parse gives no parameters.
func NewDocument(name, title, description string, inputSchema []byte) Document {
	d := Document{Name: name, Title: title, Description: strings.TrimSpace(description)}
	var s struct {
		Properties map[string]struct {
			Type        any    `json:"type"`
			Description string `json:"description"`
			Enum        []any  `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(inputSchema, &s) != nil {
		return d
	}
	req := map[string]bool{}
	for _, r := range s.Required {
		req[r] = true
	}
	for n, p := range s.Properties {
		par := Param{Name: n, Description: strings.TrimSpace(p.Description), Required: req[n]}
		switch t := p.Type.(type) {
		case string:
			par.Type = t
		case []any:
			if len(t) > 0 {
				par.Type = fmt.Sprint(t[0])
			}
		}
		for _, e := range p.Enum {
			par.Enum = append(par.Enum, fmt.Sprint(e))
		}
		d.Params = append(d.Params, par)
	}
	sort.Slice(d.Params, func(i, j int) bool { return d.Params[i].Name < d.Params[j].Name })
	return d
}

// JSON renders the document as the prompts show it.
func (d Document) JSON() string {
	v := struct {
		Name        string  `json:"name"`
		Title       string  `json:"title,omitempty"`
		Description string  `json:"description"`
		Parameters  []Param `json:"parameters"`
	}{d.Name, d.Title, d.Description, d.Params}
	if v.Parameters == nil {
		v.Parameters = []Param{}
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}
