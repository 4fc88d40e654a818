package enrich

import (
	"context"
	"strings"

	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/lexicon"
	"github.com/toolgate/toolgate/internal/meaning"
)

// StepExpansion is the knowledge expansion step (Expander), as stored in
// tool_enrichments.step.
const StepExpansion = "expansion"

// Expander is an enricher that also expands a tool document with related words of its key
// terms (the heuristic enricher with a lexicon). The expansion is indexed below the tool's
// own words (the lowest lexical field weight) and is a component of weight 0 in the
// built-in profiles, so it can add a match but never outweighs one on the tool's own text.
type Expander interface {
	Expansion(ctx context.Context, d Document) ([]string, Usage, error)
}

// Limits of the knowledge expansion: key terms taken from the document, senses expanded per
// term besides the one that fits the document best, hypernym and hyponym words and gloss
// words per sense, words added per key term and in all. Chosen on the development half of
// testdata/mcp-paraphrase (docs/eval.md).
const (
	maxExpansionTerms   = 12
	expansionSenses     = 3
	expansionHypernyms  = 2
	expansionHyponyms   = 5
	expansionGlossWords = 4
	expansionPerTerm    = 12
	maxExpansionWords   = 60
)

// expansionStop are words of tool documents whose senses say nothing about the tool.
var expansionStop = map[string]bool{
	"get": true, "set": true, "list": true, "use": true, "using": true, "used": true, "given": true,
	"specific": true, "specified": true, "new": true, "existing": true, "optional": true, "multiple": true,
	"id": true, "ids": true, "the": true, "and": true, "for": true, "with": true, "from": true,
	"tool": true, "api": true, "data": true, "information": true, "details": true, "detailed": true,
	"returns": true, "return": true, "provided": true, "provide": true, "one": true, "all": true,
	"can": true, "this": true, "that": true, "your": true, "not": true, "only": true, "will": true,
	"about": true, "into": true, "when": true, "which": true, "other": true, "each": true, "more": true,
}

// KeyTerms are the words of a document that expansion starts from: the name's words, then
// the content words of the title and the description's first sentence, each once, at most
// maxExpansionTerms. Words the document uses as names (meaning.Names: "Frost" of
// Cullen/Frost Bankers, "Apple", the server's name) are not key terms: their senses are
// not what the tool is about.
func KeyTerms(d Document) []string {
	var out []string
	seen := documentNames(d)
	add := func(text string) {
		for _, w := range embed.Words(text) {
			if len(out) == maxExpansionTerms {
				return
			}
			if len(w) < 3 || expansionStop[w] || seen[w] || !isLetters(w) {
				continue
			}
			seen[w] = true
			out = append(out, w)
		}
	}
	add(d.Name)
	add(d.Title)
	if s := splitSentences(d.Description); len(s) > 0 {
		add(s[0])
	}
	return out
}

func isLetters(w string) bool {
	for _, r := range w {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

// Expand returns the words the lexicon relates to the document's key terms (KeyTerms): for
// the sense of each term that fits the document best (Sense) and its first senses, the
// synonyms, the words of the first hypernym, the first word of the first hyponyms and the
// first content words of the definition. Each key term adds at most expansionPerTerm words,
// so that every term is expanded, the first key terms' words first; words of the document
// itself are left out, each word comes once, and at most maxExpansionWords are returned.
// A query may name a tool's subject by a synonym ("duplicate" for copy), a narrower word
// ("chore" for task) or a broader one: the expansion holds such words for the lexical index.
func Expand(lex *lexicon.Lexicon, d Document) []string {
	own := map[string]bool{}
	for _, w := range documentWords(d) {
		own[w] = true
		own[embed.Stem(w)] = true
	}
	var out []string
	termStart := 0
	add := func(ws []string, n int) {
		for _, w := range ws[:min(n, len(ws))] {
			if len(out) < maxExpansionWords && len(out)-termStart < expansionPerTerm &&
				!own[w] && !own[embed.Stem(w)] && !expansionStop[w] {
				own[w] = true
				out = append(out, w)
			}
		}
	}
	// The sense is chosen by the whole document, its names left out ("frost" of a bank
	// says nothing about which sense of "stock" it means).
	names := documentNames(d)
	var words []string
	for _, w := range documentWords(d) {
		if !names[w] {
			words = append(words, w)
		}
	}
	context := stems(words)
	for _, term := range KeyTerms(d) {
		best, ok := Sense(lex, term, context)
		if !ok {
			continue
		}
		termStart = len(out)
		senses := lex.Senses(term)
		for _, id := range append([]lexicon.SynsetID{best}, senses[:min(expansionSenses, len(senses))]...) {
			s := lex.Synset(id)
			add(s.Words, len(s.Words))
			if len(s.Hypernyms) > 0 {
				add(lex.Synset(s.Hypernyms[0]).Words, expansionHypernyms)
			}
			hypo := lex.Hyponyms(id)
			for _, h := range hypo[:min(expansionHyponyms, len(hypo))] {
				add(lex.Synset(h).Words, 1)
			}
			add(s.Gloss, expansionGlossWords)
		}
	}
	return out
}

// Sense picks the sense of word that fits a context (the stems of the words around it): the
// one whose synonyms, definition and hypernyms' words share most stems with the context
// (simplified Lesk), the most frequent one on a tie. "file" in a document about
// directories is the computer file, not the verb of a court's records.
func Sense(lex *lexicon.Lexicon, word string, context map[string]bool) (lexicon.SynsetID, bool) {
	senses := lex.Senses(word)
	if len(senses) == 0 {
		return 0, false
	}
	self := embed.Stem(word)
	best, bestScore := senses[0], 0
	for _, id := range senses {
		s := lex.Synset(id)
		seen := map[string]bool{self: true}
		score := 0
		count := func(ws []string) {
			for _, w := range ws {
				st := embed.Stem(w)
				if !seen[st] && context[st] {
					score++
				}
				seen[st] = true
			}
		}
		count(s.Words)
		count(s.Gloss)
		for _, h := range s.Hypernyms {
			count(lex.Synset(h).Words)
		}
		if score > bestScore {
			best, bestScore = id, score
		}
	}
	return best, true
}

// documentNames are the words the document uses as names (meaning.Names): the name, the
// title, the description and each parameter's description read as sentences of their own.
func documentNames(d Document) map[string]bool {
	var b strings.Builder
	b.WriteString(d.Name + "\n" + d.Title + "\n" + d.Description)
	for _, p := range d.Params {
		b.WriteString("\n" + p.Description)
	}
	return meaning.Names(b.String())
}

// documentWords are the words of the name, title, description and parameters.
func documentWords(d Document) []string {
	out := embed.Words(d.Name + " " + d.Title + " " + d.Description)
	for _, p := range d.Params {
		out = append(out, embed.Words(p.Name+" "+p.Description)...)
	}
	return out
}

func stems(words []string) map[string]bool {
	out := make(map[string]bool, len(words))
	for _, w := range words {
		if !expansionStop[w] {
			out[embed.Stem(w)] = true
		}
	}
	return out
}

// Expansion implements Expander: nothing without a lexicon.
func (h Heuristic) Expansion(_ context.Context, d Document) ([]string, Usage, error) {
	if h.Lexicon == nil {
		return nil, Usage{}, nil
	}
	lex, err := h.Lexicon()
	if err != nil {
		return nil, Usage{}, err
	}
	return Expand(lex, d), Usage{}, nil
}

// expansionOutput is the stored output of the expansion step.
type expansionOutput struct {
	Words []string `json:"words"`
}

func (s *Service) expansionStep(ctx context.Context, doc Document, st *steps) ([]string, error) {
	ex, ok := s.Enricher.(Expander)
	if !ok {
		return nil, nil
	}
	var eo expansionOutput
	if st.reuse(StepExpansion, &eo) {
		return eo.Words, nil
	}
	words, u, err := ex.Expansion(ctx, doc)
	st.usage = st.usage.Add(u)
	if err != nil {
		return nil, err
	}
	if len(words) == 0 {
		return nil, nil
	}
	words = strings.Fields(strings.Join(words, " "))
	st.record(StepExpansion, expansionOutput{Words: words}, u)
	return words, nil
}
