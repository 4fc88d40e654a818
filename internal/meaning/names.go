package meaning

import (
	"strings"
	"unicode"

	"github.com/toolgate/toolgate/internal/embed"
)

// Names are the words a text uses as names rather than as common nouns and verbs: a
// company, product or person ("Cullen/Frost Bankers", "Allison Transmission", "Apple") has
// no WordNet sense that says anything about a tool, and giving it one makes a bank a
// weather tool and a gearbox maker a mail tool. A word is a name when the text never uses
// it in lowercase prose and either
//
//   - it is capitalised inside a sentence of prose (a sentence with a lowercase content
//     word, so that a Title Case heading such as "Create Pull Request" is no evidence), or
//   - it names the namespace of a namespaced identifier ("notion" in
//     notion__API-delete-a-block) and the text writes it capitalised, even at the start of
//     a sentence ("Notion | Delete a block"), or the tool's own name repeats it first, as
//     a product prefixes its tools (git__git_status). A server named for what it does
//     ("memory" of memory__search_nodes) keeps its senses.
//
// A word at the start of a sentence is no evidence of its own, nor is a word inside an
// identifier (snake_case, camelCase, a path or URL). The words are lowercased, as embed.Words gives
// them.
func Names(text string) map[string]bool {
	candidates := map[string]bool{}
	namespace := map[string]bool{}
	capital := map[string]bool{}
	lower := map[string]bool{}
	for _, s := range sentences(text) {
		prose := s.prose()
		for i, w := range s.words {
			switch {
			case w.namespace:
				namespace[w.lower] = true
				capital[w.lower] = capital[w.lower] || w.prefix
			case w.capital:
				capital[w.lower] = true
				if i > 0 && prose {
					candidates[w.lower] = true
				}
			default:
				lower[w.lower] = true
			}
		}
	}
	for w := range namespace {
		if capital[w] {
			candidates[w] = true
		}
	}
	names := map[string]bool{}
	for w := range candidates {
		if !lower[w] {
			names[w] = true
		}
	}
	return names
}

// nameWord is one word of a sentence, as Names reads it.
type nameWord struct {
	lower     string
	capital   bool // its first letter is upper case
	namespace bool // it names the namespace of an identifier
	prefix    bool // a namespace word the identifier's own name starts with
}

type sentence struct{ words []nameWord }

// prose: the sentence has a lowercase content word, so it is not a heading in Title Case.
func (s sentence) prose() bool {
	for _, w := range s.words {
		if !w.capital && !w.namespace && len(w.lower) > 2 && !embed.IsStopword(w.lower) {
			return true
		}
	}
	return false
}

// sentences splits text at line breaks, at the marks that end a sentence or clause
// (. ! ? : ;) before a space, at bullets and around namespaced identifiers, and reads the
// words of each; identifiers give only their namespace words.
func sentences(text string) []sentence {
	var out []sentence
	var cur sentence
	end := func() {
		if len(cur.words) > 0 {
			out = append(out, cur)
		}
		cur = sentence{}
	}
	for line := range strings.Lines(text) {
		for _, tok := range strings.Fields(line) {
			switch {
			case strings.Contains(tok, "__"):
				// a namespaced identifier: a sentence of its own
				end()
				parts := strings.Split(tok, "__")
				own := embed.Words(parts[len(parts)-1])
				for _, p := range parts[:len(parts)-1] {
					for _, w := range embed.Words(p) {
						cur.words = append(cur.words, nameWord{lower: w, namespace: true, prefix: len(own) > 0 && own[0] == w})
					}
				}
				end()
				continue
			case isIdentifier(tok):
			default:
				for part := range strings.FieldsFuncSeq(tok, func(r rune) bool { return !isWordRune(r) && r != '\'' }) {
					part = strings.TrimSuffix(strings.Trim(part, "'"), "'s")
					if part == "" || !unicode.IsLetter([]rune(part)[0]) {
						continue
					}
					// "GitHub" is two words to embed.Words, each a name's
					capital := unicode.IsUpper([]rune(part)[0])
					for _, w := range embed.Words(part) {
						cur.words = append(cur.words, nameWord{lower: w, capital: capital})
					}
				}
			}
			if t := strings.TrimRight(tok, `"')]*`); t == "" || strings.ContainsRune(".!?:;", rune(t[len(t)-1])) || !strings.ContainsFunc(t, isWordRune) {
				end() // a sentence or clause ends, or a bullet or separator ("|", "-") starts one
			}
		}
		end()
	}
	return out
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// isIdentifier: a token written as code rather than prose: snake_case, a path or URL, a
// dotted name, or camelCase (a lowercase letter first, a capital after a lowercase one). A slash between
// words ("Cullen/Frost", "and/or") is prose.
func isIdentifier(tok string) bool {
	t := strings.Trim(tok, "`\"'()[]{},.;:!?")
	if strings.ContainsAny(t, "_.=<>@#$%{}`") || strings.Contains(t, "://") || strings.HasPrefix(t, "/") || strings.HasPrefix(t, "~") {
		return true
	}
	// camelCase starts in lowercase; "GitHub" and "YouTube" are names
	rs := []rune(t)
	if len(rs) == 0 || !unicode.IsLower(rs[0]) {
		return false
	}
	for i := 1; i < len(rs); i++ {
		if unicode.IsLower(rs[i-1]) && unicode.IsUpper(rs[i]) {
			return true
		}
	}
	return false
}
