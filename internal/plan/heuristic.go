package plan

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxIntents bounds how many sub-intents the heuristic planner makes of one query.
const MaxIntents = 10

// Shorthand is the table of shorthand the heuristic planner expands (whole words, any case).
// It is short on purpose: only forms that are unambiguous in a tool catalog.
var Shorthand = map[string]string{
	"rev":     "revenue",
	"revs":    "revenues",
	"px":      "price",
	"tgt":     "target",
	"eps":     "earnings per share",
	"p/e":     "price to earnings ratio",
	"mkt cap": "market cap",
	"mcap":    "market cap",
	"div":     "dividend",
	"divs":    "dividends",
	"yoy":     "year over year",
	"qoq":     "quarter over quarter",
	"ytd":     "year to date",
	"fy":      "fiscal year",
	"hist":    "history",
	"net inc": "net income",
	"w/":      "with",
}

// shorthandRE matches the keys of Shorthand as whole words, longest first.
var shorthandRE = func() *regexp.Regexp {
	keys := make([]string, 0, len(Shorthand))
	for k := range Shorthand {
		keys = append(keys, regexp.QuoteMeta(k))
	}
	slices.SortFunc(keys, func(a, b string) int { return len(b) - len(a) })
	return regexp.MustCompile(`(?i)(^|[^\pL\pN$])(` + strings.Join(keys, "|") + `)($|[^\pL\pN/])`)
}()

// listSeparators join the entities of a list: "Apple, Ford, and Tesla", "AAPL vs MSFT".
var listSeparators = map[string]bool{
	"": true, ",": true, "and": true, ", and": true, "or": true, ", or": true, "&": true,
	"vs": true, "vs.": true, "versus": true, "plus": true, "/": true, "as well as": true,
	", as well as": true, ", plus": true,
}

// clauseSplit finds where a query may split into clauses: commas, semicolons and the
// conjunctions "and", "as well as", "plus", "also".
var clauseSplit = regexp.MustCompile(`(?i)\s*(?:;|,?\s+(?:and also|and|as well as|plus)\s+|,\s+)`)

// notTickers are one-letter tickers that are English words; they count only as "$A", "$I".
var notTickers = map[string]bool{"A": true, "I": true}

// Heuristic is the planner that needs no model. It knows the companies, products or other
// entities of the catalog through a vocabulary of surface forms (tickers, aliases, names)
// mapped to their canonical name, and splits a query into one intent per entity when the
// entities form a list or sit in separate clauses. The rules and their limits are in
// docs/planning.md.
type Heuristic struct {
	byPrefix map[string][]surface // lower-cased first two bytes (one, for one-byte surfaces) → surfaces, longest first
}

type surface struct {
	text      string
	canonical string
	ticker    bool // no lower-case letter and at most 5 bytes: matched case-sensitively
	oneWord   bool // a single word: its first letter must match case-sensitively
}

// NewHeuristic builds the heuristic planner over aliases: surface form → canonical name
// (e.g. "AAPL" → "Apple", "Google" → "Alphabet"). Canonical names are surfaces too.
func NewHeuristic(aliases map[string]string) *Heuristic {
	h := &Heuristic{byPrefix: map[string][]surface{}}
	seen := map[string]bool{}
	add := func(text, canonical string) {
		text = strings.TrimSpace(text)
		if text == "" || canonical == "" || seen[text] {
			return
		}
		seen[text] = true
		s := surface{text: text, canonical: canonical, oneWord: !strings.ContainsAny(text, " \t")}
		s.ticker = len(text) <= 5 && strings.IndexFunc(text, unicode.IsLower) < 0
		k := prefixKey(text)
		h.byPrefix[k] = append(h.byPrefix[k], s)
	}
	for s, c := range aliases {
		add(c, c)
		add(s, c)
	}
	for k, list := range h.byPrefix {
		slices.SortFunc(list, func(a, b surface) int {
			if len(a.text) != len(b.text) {
				return len(b.text) - len(a.text)
			}
			return strings.Compare(a.text, b.text)
		})
		h.byPrefix[k] = list
	}
	return h
}

// Plan makes the heuristic plan; it never fails.
func (h *Heuristic) Plan(_ context.Context, query string, mode Mode) (Plan, error) {
	return h.plan(query, mode), nil
}

func (h *Heuristic) plan(query string, mode Mode) Plan {
	query = strings.TrimSpace(query)
	switch mode {
	case ModeRewrite:
		return single(query, h.Rewrite(query), mode, NameHeuristic)
	case ModeDecompose, ModeFull:
	default:
		return single(query, query, ModeNone, NameHeuristic)
	}
	p := Plan{Mode: mode, Original: query, Rewritten: query, Planner: NameHeuristic}
	parts, tasks := h.decomposeTasks(query)
	if mode == ModeFull {
		p.Rewritten = h.Rewrite(query)
	}
	for _, part := range parts {
		in := Intent{Query: part}
		if mode == ModeFull {
			if r := h.Rewrite(part); r != part {
				in = Intent{Query: r, Variants: []string{part}}
			}
		}
		// A task cut out of a longer request often leaves its context behind ("Find the
		// Gmail from DocuSign about the NDA. Then open it."): each task is also searched with
		// the whole request, fused with the task by the search's fusion (docs/planning.md).
		if tasks && len(parts) > 1 {
			in.Variants = append(in.Variants, p.Rewritten)
		}
		p.Intents = append(p.Intents, in)
	}
	return p
}

// Rewrite replaces every entity mention by its canonical name ("$AAPL" → "Apple") and
// expands the shorthand of the Shorthand table outside entity mentions.
func (h *Heuristic) Rewrite(query string) string {
	var b strings.Builder
	last := 0
	for _, m := range h.mentions(query) {
		b.WriteString(expandShorthand(query[last:m.start]))
		b.WriteString(m.canonical)
		last = m.end
	}
	b.WriteString(expandShorthand(query[last:]))
	return b.String()
}

func expandShorthand(s string) string {
	// The pattern consumes one boundary character on each side, so adjacent shorthand
	// ("rev px") needs a second pass.
	for range 2 {
		s = shorthandRE.ReplaceAllStringFunc(s, func(m string) string {
			sub := shorthandRE.FindStringSubmatch(m)
			return sub[1] + Shorthand[strings.ToLower(sub[2])] + sub[3]
		})
	}
	return s
}

// mention is an entity found in a query: query[start:end] is the surface, end ≤ possEnd
// covers a possessive "'s".
type mention struct {
	start, end, possEnd int
	canonical           string
}

// run is a chain of entity mentions joined only by list separators; it is a list to
// split when it names at least two different entities.
type run struct {
	start, end int
	items      []mention
}

// Decompose splits a query into independent sub-queries; a query that is one task about
// one entity comes back whole. First the query is split into tasks (SplitTasks: sentences,
// cue words, enumerations, "and" between verb phrases); then each task is split by entity
// with the vocabulary. Rules for the entities, in order:
//
//  1. Entity lists: two or more different entities joined only by list separators
//     ("Apple, Ford, and Tesla", "AAPL vs MSFT", "Apple's and Ford's") form a list.
//  2. Clauses: the query is cut at commas, semicolons and "and"/"plus"/"as well as"
//     outside lists; a piece without an entity joins the piece before it (or after it,
//     for the first), so "profit and loss statement of Apple" stays whole and
//     "Apple's stock price and Microsoft's net income" becomes two pieces.
//  3. Each piece holding a list becomes one sub-query per entity: the piece with the list
//     replaced by that entity, so predicates shared by the list are distributed.
func (h *Heuristic) Decompose(query string) []string {
	out, _ := h.decomposeTasks(query)
	return out
}

// decomposeTasks is Decompose, also telling whether the query held several tasks.
func (h *Heuristic) decomposeTasks(query string) (out []string, tasks bool) {
	query = strings.TrimSpace(query)
	if ts := SplitTasks(query); len(ts) < 2 {
		out = h.decompose(query) // one task: the entity rules alone
	} else {
		tasks = true
		for _, t := range ts {
			for _, s := range h.decompose(t) {
				out = appendUnique(out, s)
			}
		}
	}
	if len(out) > MaxIntents {
		out = out[:MaxIntents]
	}
	return out, tasks
}

func (h *Heuristic) decompose(query string) []string {
	if len(h.byPrefix) == 0 {
		return []string{query} // no vocabulary: no entity to split by
	}
	ms := h.mentions(query)
	runs := lists(query, ms)
	pieces := clauses(query, ms, runs)
	splittable := slices.ContainsFunc(runs, func(r run) bool { return len(r.items) >= 2 })
	if len(pieces) == 1 && !splittable {
		return []string{query}
	}
	var out []string
	for _, pc := range pieces {
		text := query[pc[0]:pc[1]]
		var first *run
		for i := range runs {
			if len(runs[i].items) >= 2 && runs[i].start >= pc[0] && runs[i].end <= pc[1] {
				first = &runs[i]
				break
			}
		}
		if first == nil {
			out = appendUnique(out, cleanPiece(text))
			continue
		}
		for _, m := range first.items {
			repl := query[m.start:m.possEnd]
			if last := first.items[len(first.items)-1]; last.possEnd > last.end && m.possEnd == m.end {
				repl += "'s" // "Apple and Ford's revenue": the possessive belongs to every entity
			}
			sub := query[pc[0]:first.start] + repl + query[first.end:pc[1]]
			// The other lists of the piece, if any, are split in turn.
			for _, s := range h.decompose(cleanPiece(sub)) {
				out = appendUnique(out, s)
				if len(out) >= MaxIntents {
					return out
				}
			}
		}
	}
	return out
}

func appendUnique(list []string, s string) []string {
	if s == "" || slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// cleanPiece trims the whitespace and dangling separators a cut leaves behind.
func cleanPiece(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == ',' || r == ';' })
}

// lists finds the entity lists of rule 1.
func lists(query string, ms []mention) []run {
	var out []run
	for i := 0; i < len(ms); {
		j := i
		for j+1 < len(ms) && listSeparators[strings.ToLower(strings.TrimSpace(query[ms[j].possEnd:ms[j+1].start]))] {
			j++
		}
		var items []mention
		for _, m := range ms[i : j+1] {
			if !slices.ContainsFunc(items, func(x mention) bool { return x.canonical == m.canonical }) {
				items = append(items, m)
			}
		}
		// A chain naming one entity twice ("Apple and AAPL") is kept whole but not split.
		if j > i {
			out = append(out, run{start: ms[i].start, end: ms[j].possEnd, items: items})
		}
		i = j + 1
	}
	return out
}

// clauses cuts the query by rule 2 and returns the pieces as [start, end) byte ranges.
func clauses(query string, ms []mention, runs []run) [][2]int {
	inside := func(pos int) bool {
		for _, r := range runs {
			if pos >= r.start && pos < r.end {
				return true
			}
		}
		for _, m := range ms {
			if pos >= m.start && pos < m.possEnd {
				return true
			}
		}
		return false
	}
	var cuts [][2]int // separator ranges
	for _, loc := range clauseSplit.FindAllStringIndex(query, -1) {
		if !inside(loc[0]) && !inside(loc[1]-1) {
			cuts = append(cuts, [2]int{loc[0], loc[1]})
		}
	}
	var pieces [][2]int
	start := 0
	for _, c := range cuts {
		pieces = append(pieces, [2]int{start, c[0]})
		start = c[1]
	}
	pieces = append(pieces, [2]int{start, len(query)})
	hasEntity := func(p [2]int) bool {
		return slices.ContainsFunc(ms, func(m mention) bool { return m.start >= p[0] && m.end <= p[1] })
	}
	var merged [][2]int
	pending := -1 // start of entity-less pieces before the first piece with an entity
	for _, p := range pieces {
		switch {
		case hasEntity(p) && pending >= 0:
			merged = append(merged, [2]int{pending, p[1]})
			pending = -1
		case hasEntity(p):
			merged = append(merged, p)
		case len(merged) > 0:
			merged[len(merged)-1][1] = p[1]
		case pending < 0:
			pending = p[0]
		}
	}
	if len(merged) == 0 {
		return [][2]int{{0, len(query)}}
	}
	return merged
}

// mentions finds the entity mentions of query, left to right, longest surface first.
func (h *Heuristic) mentions(query string) []mention {
	var out []mention
	for i := 0; i < len(query); {
		if !wordStart(query, i) {
			i++
			continue
		}
		if m, ok := h.match(query, i); ok {
			out = append(out, m)
			i = m.possEnd
			continue
		}
		i++
	}
	return out
}

func (h *Heuristic) match(query string, i int) (mention, bool) {
	dollar := query[i] == '$'
	at := i
	if dollar {
		at++
		if at >= len(query) {
			return mention{}, false
		}
	}
	// Surfaces of two bytes or more come before the one-byte ones: longest first.
	for _, bucket := range [2][]surface{h.byPrefix[prefixKey(query[at:])], h.byPrefix[prefixKey(query[at:at+1])]} {
		if m, ok := matchIn(bucket, query, i, at, dollar); ok {
			return m, true
		}
	}
	return mention{}, false
}

func matchIn(bucket []surface, query string, i, at int, dollar bool) (mention, bool) {
	for _, s := range bucket {
		end := at + len(s.text)
		if end > len(query) || !strings.EqualFold(query[at:end], s.text) || !wordEnd(query, end) {
			continue
		}
		switch {
		case dollar:
			if !s.ticker {
				continue
			}
		case s.ticker:
			if query[at:end] != s.text || notTickers[s.text] {
				continue
			}
		case s.oneWord:
			if query[at] != s.text[0] {
				continue
			}
		}
		m := mention{start: i, end: end, possEnd: end, canonical: s.canonical}
		for _, p := range []string{"'s", "’s"} {
			if strings.HasPrefix(query[end:], p) && wordEnd(query, end+len(p)) {
				m.possEnd = end + len(p)
			}
		}
		return m, true
	}
	return mention{}, false
}

// prefixKey is the bucket of a surface or of a query position: its first two bytes, lower
// case (ASCII only, so that the key stays a byte prefix).
func prefixKey(s string) string {
	b := []byte(s[:min(2, len(s))])
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// wordStart: position i begins a word (or a "$TICKER"), not the middle of "AT&T" or "BRK.B".
func wordStart(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	if !isWordRune(r) && r != '$' {
		return false
	}
	if i == 0 {
		return true
	}
	p, _ := utf8.DecodeLastRuneInString(s[:i])
	return !isWordRune(p) && !strings.ContainsRune("&.'’-_$", p)
}

// wordEnd: position i ends a word; a '.' or '-' followed by a letter continues it.
func wordEnd(s string, i int) bool {
	if i >= len(s) {
		return true
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	if isWordRune(r) {
		return false
	}
	if r == '&' || r == '.' || r == '-' {
		next, _ := utf8.DecodeRuneInString(s[i+n:])
		return !isWordRune(next)
	}
	return true
}
