package enrich

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/lexicon"
)

// Heuristic is the built-in enricher that needs no model: it splits identifiers, reuses
// the description's own phrases and the parameters' names, descriptions and enum values,
// and fills fixed templates. It never invents facts beyond the document, and it is named
// "heuristic" wherever its outputs are shown. With a Lexicon it also expands each document
// with related words of its key terms (Expander); without one it makes no expansion.
type Heuristic struct {
	// Lexicon loads the lexicon on the first expansion (lexicon.Builtin: a second and 25 MB
	// of heap, spent only by a process that enriches); nil means no expansion.
	Lexicon func() (*lexicon.Lexicon, error)
}

// Deterministic: the heuristic's outputs depend on the document only, so a malformed one
// would come back on every retry (Service does not retry it).
func (Heuristic) Deterministic() bool { return true }

// Model names the heuristic's output version: v2 is v1 with the knowledge expansion of a
// lexicon, v3 expands no name (meaning.Names) and bounds the expansion by the document's
// own length, v4 writes a name's initials as one word (joinInitials: get_at_t_revenue's
// questions say "att revenue", not "at t revenue").
func (h Heuristic) Model() string {
	if h.Lexicon != nil {
		return "heuristic-v4"
	}
	return "heuristic-v1"
}

// Supersedes names the earlier versions whose outputs v4 replaces: the workers re-enrich
// the tools they enriched (jobs.RequeueSuperseded).
func (h Heuristic) Supersedes() []string {
	if h.Lexicon != nil {
		return []string{"heuristic-v1", "heuristic-v2", "heuristic-v3"}
	}
	return nil
}

// verbs that open tool names and descriptions.
var verbs = map[string]bool{
	"get": true, "fetch": true, "retrieve": true, "return": true, "list": true, "search": true,
	"find": true, "create": true, "update": true, "delete": true, "send": true, "compute": true,
	"calculate": true, "lookup": true, "query": true, "check": true, "read": true, "write": true,
	"set": true, "add": true, "remove": true, "show": true, "run": true, "convert": true,
}

var (
	trailingBy    = regexp.MustCompile(`(?i)\s+(by|per|for each|over)\s+[\w-]+$`)
	limitationCue = regexp.MustCompile(`(?i)\b(only|if|unless|unavailable|limit(ed|s)?|at most|maximum|max|last \d+|not|must|requires?|rate)\b`)
	// An ASCII mark ends a sentence before a space or the end; a CJK one ends it where it
	// stands, since those scripts put no space after it.
	sentenceEnd     = regexp.MustCompile(`[.!?](\s+|$)|[。！？．]\s*`)
	yearish         = regexp.MustCompile(`(?i)year`)
	datish          = regexp.MustCompile(`(?i)date|day`)
	helperStopwords = map[string]bool{"the": true, "a": true, "an": true, "of": true, "for": true, "and": true, "or": true, "to": true, "by": true, "in": true, "on": true, "with": true, "if": true, "is": true, "no": true, "such": true, "as": true, "all": true, "any": true, "over": true}
)

// maxPhraseLen bounds the description clause the question templates repeat, in
// characters, so that a question (the clause, a verb and a parameter word around it)
// stays within maxQuestionLen. It is no lower than that needs: a clause that fits is used
// whole, so the questions of the catalogs whose descriptions have marks do not change.
const maxPhraseLen = 220

// shape is what the templates are filled from.
type shape struct {
	verb       string // lowercase leading verb of the name, "get" when there is none
	object     string // the name without its verb, spaced: "apple current stock price"
	phrase     string // the description's first clause without its verb: "Apple's total revenue by year"
	phraseNoBy string // phrase without a trailing "by year": "Apple's total revenue"
	sentences  []string
}

func shapeOf(d Document) shape {
	var s shape
	words := embed.Words(joinInitials(d.Name))
	s.verb = "get"
	if len(words) > 1 && verbs[words[0]] {
		s.verb, words = words[0], words[1:]
	}
	s.object = strings.Join(words, " ")
	s.sentences = splitSentences(d.Description)
	if len(s.sentences) > 0 {
		clause := strings.TrimRight(s.sentences[0], ".!? 。！？．")
		if i := strings.IndexAny(clause, ",;:(，、；：（"); i > 0 {
			clause = clause[:i]
		}
		// a description with no mark at all would make every question as long as itself
		clause = CutRunes(clause, maxPhraseLen)
		f := strings.Fields(clause)
		if len(f) > 1 {
			first := strings.ToLower(f[0])
			if verbs[first] || verbs[strings.TrimSuffix(first, "s")] {
				f = f[1:]
			}
		}
		s.phrase = strings.Join(f, " ")
		s.phraseNoBy = trailingBy.ReplaceAllString(s.phrase, "")
	}
	if s.phrase == "" {
		s.phrase, s.phraseNoBy = s.object, s.object
	}
	return s
}

func splitSentences(text string) []string {
	var out []string
	for _, loc := range splitKeep(text) {
		if t := strings.TrimSpace(loc); t != "" {
			out = append(out, t)
		}
	}
	return out
}

func splitKeep(text string) []string {
	var out []string
	last := 0
	for _, m := range sentenceEnd.FindAllStringIndex(text, -1) {
		// keep the whole mark, which is three bytes in the CJK scripts
		_, size := utf8.DecodeRuneInString(text[m[0]:])
		out = append(out, text[last:m[0]+size])
		last = m[1]
	}
	return append(out, text[last:])
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = f[:n]
	}
	return strings.Join(f, " ")
}

func capitalize(s string) string {
	for i, r := range s {
		return string(unicode.ToUpper(r)) + s[i+len(string(r)):]
	}
	return s
}

// exampleValue is a plausible argument for p, taken from the schema where it can be.
func exampleValue(p Param) string {
	switch {
	case len(p.Enum) > 0:
		return p.Enum[0]
	case yearish.MatchString(p.Name):
		return "2023"
	case datish.MatchString(p.Name):
		return "2024-01-15"
	case p.Type == "integer" || p.Type == "number":
		return "10"
	case p.Type == "boolean":
		return "true"
	}
	return ""
}

func paramWords(p Param) string { return strings.Join(embed.Words(p.Name), " ") }

// Questions implements Enricher with templates over the name, the description's first
// clause and the parameters.
func (h Heuristic) Questions(_ context.Context, d Document, n int) ([]string, Usage, error) {
	if n <= 0 {
		return nil, Usage{}, nil
	}
	s := shapeOf(d)
	var qs []string
	add := func(format string, args ...any) { qs = append(qs, capitalize(fmt.Sprintf(format, args...))) }
	add("What is %s?", s.phrase)
	for _, p := range d.Params {
		pw := paramWords(p)
		switch {
		case len(p.Enum) > 0:
			for _, v := range p.Enum[:min(len(p.Enum), 3)] {
				add("%s %s for %s %s", s.verb, s.object, pw, v)
			}
		case yearish.MatchString(p.Name):
			add("What is %s for 2022?", s.phraseNoBy)
			add("%s in 2019", s.object)
		case exampleValue(p) != "":
			add("%s %s with %s %s", s.verb, s.object, pw, exampleValue(p))
		default:
			add("%s %s for a given %s", s.verb, s.phraseNoBy, pw)
		}
	}
	add("Can you %s %s?", s.verb, s.phrase)
	add("I need %s.", s.object)
	add("%s", s.object)
	add("Show me %s.", s.phraseNoBy)
	add("How do I %s %s?", s.verb, s.object)
	if d.Title != "" {
		add("%s?", d.Title)
	}
	add("Tell me %s.", s.phraseNoBy)
	add("Look up %s.", s.object)
	add("%s %s", s.verb, s.phraseNoBy)
	add("Please find %s.", s.object)
	add("Which %s?", s.object)
	out, err := CleanQuestions(qs, n)
	return out, Usage{}, err
}

// Topics implements Enricher: the name's object, the description's subject, and the
// name's object refined by each parameter.
func (h Heuristic) Topics(_ context.Context, d Document) ([]string, Usage, error) {
	s := shapeOf(d)
	ts := []string{firstWords(s.object, maxTopicWords)}
	if n := len(strings.Fields(s.phraseNoBy)); n > 0 && n <= maxTopicWords {
		ts = append(ts, strings.ToLower(s.phraseNoBy))
	}
	for _, p := range d.Params {
		ts = append(ts, firstWords(s.object+" by "+paramWords(p), maxTopicWords))
	}
	out, err := CleanTopics(ts)
	return out, Usage{}, err
}

// Profile implements Enricher with the description's own sentences: function is its first
// sentence, limitation the sentences that state a condition, tags the content words of the
// name, parameters and description.
func (h Heuristic) Profile(ctx context.Context, d Document) (*Profile, Usage, error) {
	s := shapeOf(d)
	p := &Profile{}
	if len(s.sentences) > 0 {
		p.Function = firstWords(s.sentences[0], 20)
	} else {
		p.Function = capitalize(s.verb + " " + s.object + ".")
	}
	p.WhenToUse = "When a request asks for " + firstWords(s.phraseNoBy, 15) + "."
	var lim []string
	for _, sent := range s.sentences[min(1, len(s.sentences)):] {
		if limitationCue.MatchString(sent) {
			lim = append(lim, sent)
		}
	}
	if len(s.sentences) > 0 {
		// a condition in the first sentence after a comma ("..., or -1 if unavailable")
		if i := strings.IndexAny(s.sentences[0], ",;"); i > 0 && limitationCue.MatchString(s.sentences[0][i:]) {
			cond := strings.TrimSpace(strings.TrimLeft(s.sentences[0][i:], ",; "))
			cond = strings.TrimPrefix(strings.TrimPrefix(cond, "or "), "and ")
			lim = append([]string{capitalize(cond)}, lim...)
		}
	}
	p.Limitation = firstWords(strings.Join(lim, " "), maxSentenceWords)

	var tags []string
	seen := map[string]bool{}
	addTag := func(w string) {
		w = strings.ToLower(w)
		// a run of CJK text has no spaces and comes out as one long word: no tag
		if len(w) < 3 || utf8.RuneCountInString(w) > maxTagLen || helperStopwords[w] || seen[w] || len(tags) >= 5 {
			return
		}
		seen[w] = true
		tags = append(tags, w)
	}
	for _, w := range embed.Words(s.object) {
		addTag(w)
	}
	for _, prm := range d.Params {
		for _, w := range embed.Words(prm.Name) {
			addTag(w)
		}
	}
	for _, w := range embed.Words(d.Description) {
		if len(tags) >= 3 {
			break
		}
		addTag(w)
	}
	for _, w := range []string{s.verb, "lookup", "data"} {
		if len(tags) < 3 {
			addTag(w)
		}
	}
	p.Tags = tags

	qs, _, err := h.Questions(ctx, d, 1)
	if err != nil {
		return nil, Usage{}, err
	}
	var args []string
	for _, prm := range d.Params {
		switch v := exampleValue(prm); {
		case v == "":
		case prm.Type == "integer" || prm.Type == "number" || prm.Type == "boolean":
			args = append(args, prm.Name+"="+v)
		default:
			args = append(args, fmt.Sprintf("%s=%q", prm.Name, v))
		}
	}
	p.ExampleUsage = []Example{{Query: qs[0], APICall: fmt.Sprintf("%s(%s)", d.Name, strings.Join(args, ", "))}}
	return p, Usage{}, nil // Service repairs it (Profile.Repair)
}
