package plan

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// SplitTasks splits a request that asks for several tasks into one piece per task, in the
// request's own words: "send an email to Bob and book a flight to Paris" → "send an email
// to Bob", "book a flight to Paris". It needs no model and no vocabulary: it cuts at
// sentence ends, line breaks, enumerations, cue words ("then", "after that", "also",
// "finally") and at "and" or "," before an imperative verb, then joins back every piece
// that is not a task of its own (context, follow-ups, back-references). A request that is
// one task comes back as nil. Every piece is a substring of the query. The rules, their
// word lists and their limits are in docs/planning.md.
func SplitTasks(query string) []string {
	query = unquoted(strings.TrimSpace(query))
	if query == "" {
		return nil
	}
	sp := splitter{q: query, low: asciiLower(query)}
	return sp.split()
}

// unquoted is q without the pair of quotes that wraps all of it, when they are the only
// quotes of their kind in it: a request pasted in quotes is still several tasks, and
// nothing inside quotes is cut.
func unquoted(q string) string {
	for _, p := range [...][2]string{{`"`, `"`}, {"“", "”"}, {"'", "'"}, {"`", "`"}} {
		if len(q) > len(p[0])+len(p[1]) && strings.HasPrefix(q, p[0]) && strings.HasSuffix(q, p[1]) {
			inner := q[len(p[0]) : len(q)-len(p[1])]
			if !strings.Contains(inner, p[0]) && !strings.Contains(inner, p[1]) {
				return strings.TrimSpace(inner)
			}
		}
	}
	return q
}

// literalBreak is the length of the written-out line break ("\n", "\r\n", as a request
// copied from JSON or a log carries it) at q[i:] when a list item follows it ("\n1.",
// "\n- "), else 0. Elsewhere ("C:\new") it is text.
func literalBreak(q string, i int) int {
	n := 0
	for {
		switch {
		case strings.HasPrefix(q[i+n:], `\n`):
			n += 2
			continue
		case strings.HasPrefix(q[i+n:], `\r\n`):
			n += 4
			continue
		}
		break
	}
	if n == 0 {
		return 0
	}
	rest := strings.TrimLeft(q[i+n:], " \t")
	d := 0
	for d < len(rest) && rest[d] >= '0' && rest[d] <= '9' {
		d++
	}
	if d > 0 && d < len(rest) && (rest[d] == '.' || rest[d] == ')') {
		return n
	}
	if f := strings.Fields(rest); len(f) > 1 && isBullet(f[0]) {
		return n
	}
	return 0
}

// chunk is a whitespace-delimited run of the query and the word inside it.
type chunk struct {
	cs, ce  int   // the chunk: q[cs:ce]
	s, e    int   // its word: without leading quotes or brackets and trailing punctuation
	punct   uint8 // the trailing punctuation after the word (p* bits)
	punctAt int   // offset of the first trailing punctuation mark
	nl      bool  // a line break precedes the chunk
	first   bool  // first word of a sentence or piece: a capital there is not a name
}

const (
	pComma = 1 << iota
	pDot
	pStop // '?' or '!'
	pSemi
	pColon
)

// Kinds of piece: what its first words make of it.
const (
	notTask    = iota // context ("I'm planning a trip."), a preamble ending in ':'
	imperative        // starts with a task verb, after "please", "can you", "I want to", …
	question          // starts with a question word
	request           // "I need the report", "looking for a hotel"
)

// piece is a run of chunks [c0, c1): c0 is the first chunk of its text, after the cue,
// marker or "and" that introduced it.
type piece struct {
	c0, c1 int
	cued   bool // introduced by a cue word, an enumeration marker or a bullet
	strong bool // begins at a sentence end, a line break or a marker
	kind   int
	verb   int  // chunk of the task verb (imperative only)
	stated bool // the verb follows a subject: "I need to buy a gift"
}

type splitter struct {
	q, low string // the query and its ASCII lower case (same byte offsets)
	ch     []chunk
	prot   [][2]int // open and close offsets of quotes and brackets: no cut inside
}

func (sp *splitter) split() []string {
	sp.tokenize()
	if len(sp.ch) < 3 {
		return nil
	}
	sp.prot = protectedRanges(sp.q)
	var ps []piece
	for _, sg := range sp.segments() {
		ps = sp.inline(sg, ps)
	}
	if len(ps) < 2 {
		return nil
	}
	ps = sp.join(ps)
	if len(ps) < 2 {
		return nil
	}
	if len(ps) > MaxIntents {
		// The tasks past the bound stay searchable as part of the last one.
		ps[MaxIntents-1].c1 = ps[len(ps)-1].c1
		ps = ps[:MaxIntents]
	}
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, strings.TrimFunc(sp.q[sp.ch[p.c0].cs:sp.ch[p.c1-1].ce], func(r rune) bool {
			return unicode.IsSpace(r) || r == ',' || r == ';' || r == ':'
		}))
	}
	return out
}

// tokenize cuts the query into chunks at white space.
func (sp *splitter) tokenize() {
	q := sp.q
	sp.ch = make([]chunk, 0, strings.Count(q, " ")+1)
	nl := false
	for i := 0; i < len(q); {
		if r, n := utf8.DecodeRuneInString(q[i:]); unicode.IsSpace(r) {
			nl = nl || r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029'
			i += n
			continue
		}
		if n := literalBreak(q, i); n > 0 {
			nl = true
			i += n
			continue
		}
		j := i
		for j < len(q) {
			r, n := utf8.DecodeRuneInString(q[j:])
			if unicode.IsSpace(r) || literalBreak(q, j) > 0 {
				break
			}
			j += n
		}
		c := chunk{cs: i, ce: j, nl: nl, first: len(sp.ch) == 0}
		nl = false
		s, e := i, j
		for s < e {
			r, n := utf8.DecodeRuneInString(q[s:e])
			if !strings.ContainsRune("\"'`([{“‘«", r) {
				break
			}
			s += n
		}
	trail:
		for e > s {
			r, n := utf8.DecodeLastRuneInString(q[s:e])
			var bit uint8
			switch r {
			case ',':
				bit = pComma
			case '.', '…':
				bit = pDot
			case '?', '!':
				bit = pStop
			case ';':
				bit = pSemi
			case ':':
				bit = pColon
			case '"', '\'', '`', ')', ']', '}', '”', '’', '»':
			default:
				break trail
			}
			e -= n
			if bit != 0 {
				c.punct |= bit
				c.punctAt = e
			}
		}
		c.s, c.e = s, e
		sp.ch = append(sp.ch, c)
		i = j
	}
}

// protectedRanges finds the quoted strings ("…", “…”, '…', `…`, ```…```) and the
// bracketed groups ((…), […], {…}) of q as (open, close) offsets; unclosed ones are not
// ranges. Nothing inside one is cut.
func protectedRanges(q string) [][2]int {
	var out [][2]int
	type open struct {
		at    int
		close byte
	}
	var stack []open
	noCloser := false
	add := func(a, b int) {
		if len(stack) == 0 {
			out = append(out, [2]int{a, b})
		}
	}
	space := func(i int) bool {
		return i < 0 || i >= len(q) || q[i] == ' ' || q[i] == '\t' || q[i] == '\n' || q[i] == '\r'
	}
	for i := 0; i < len(q); i++ {
		switch c := q[i]; c {
		case '(', '[', '{':
			closer := byte(')')
			if c != '(' {
				closer = c + 2 // ']' and '}' follow '[' and '{' by two in ASCII
			}
			stack = append(stack, open{i, closer})
		case ')', ']', '}':
			if n := len(stack); n > 0 && stack[n-1].close == c {
				at := stack[n-1].at
				stack = stack[:n-1]
				add(at, i)
			}
		case '"', '`':
			closer := string(c)
			if strings.HasPrefix(q[i:], "```") {
				closer = "```"
			}
			if j := strings.Index(q[i+len(closer):], closer); j >= 0 {
				end := i + len(closer) + j
				add(i, end)
				i = end + len(closer) - 1
			}
		case '\'':
			if noCloser || (!space(i-1) && !strings.ContainsRune("([{", rune(q[i-1]))) || space(i+1) {
				continue // an apostrophe: "don't", "students'"
			}
			noCloser = true // unless found: then none follows a later opening quote either
			for j := i + 1; j < len(q); j++ {
				if q[j] == '\'' && !space(j-1) && (j+1 == len(q) || space(j+1) || strings.IndexByte(",.;:?!)]}", q[j+1]) >= 0) {
					add(i, j)
					i, noCloser = j, false
					break
				}
			}
		case 0xE2: // “ … ” and ‘ … ’
			if strings.HasPrefix(q[i:], "“") {
				if j := strings.Index(q[i+3:], "”"); j >= 0 {
					add(i, i+3+j)
					i += 3 + j + 2
				}
			}
		}
	}
	return out
}

func (sp *splitter) protected(pos int) bool {
	for _, r := range sp.prot {
		if r[0] < pos && pos < r[1] {
			return true
		}
	}
	return false
}

// word is the lower-case word of chunk i, "" past the end.
func (sp *splitter) word(i int) string {
	if i < 0 || i >= len(sp.ch) {
		return ""
	}
	return sp.low[sp.ch[i].s:sp.ch[i].e]
}

// segment is a run of chunks between strong boundaries: sentence ends, semicolons, line
// breaks, enumeration markers, bullets.
type segment struct {
	c0, c1 int
	cued   bool // begins with a marker or a bullet
}

func (sp *splitter) segments() []segment {
	markers := sp.enumeration()
	var out []segment
	start, cued := 0, false
	for i := range sp.ch {
		c := sp.ch[i]
		bullet := (i == 0 || c.nl) && isBullet(sp.q[c.cs:c.ce])
		cut := i > 0 && (sp.ends(i-1, markers) || (c.nl && !sp.protected(c.cs)) || markers[i] || bullet)
		if cut {
			out = append(out, segment{start, i, cued})
			start, cued = i, false
		}
		if markers[i] || bullet {
			cued = true
		}
	}
	out = append(out, segment{start, len(sp.ch), cued})
	for k := range out {
		if out[k].cued && out[k].c1-out[k].c0 > 1 {
			out[k].c0++ // the marker itself is not part of the task
		}
		sp.ch[out[k].c0].first = true
	}
	return out
}

func isBullet(s string) bool {
	switch s {
	case "-", "*", "•", "–", "—", "·", "+", "→":
		return true
	}
	return false
}

// ends says whether chunk i ends a sentence: '?', '!', ';', or a '.' that does not close an
// abbreviation ("e.g.", "U.S.", "Inc.", an initial "F."), outside quotes and brackets.
func (sp *splitter) ends(i int, markers map[int]bool) bool {
	c := sp.ch[i]
	switch {
	case c.punct&(pSemi|pStop) != 0:
	case c.punct&pDot != 0 && c.punct&pComma == 0:
		if markers[i] || c.s == c.e || sp.abbreviation(i) {
			return false
		}
	default:
		return false
	}
	return !sp.protected(c.punctAt)
}

func (sp *splitter) abbreviation(i int) bool {
	w := sp.word(i)
	if abbreviations[w] {
		// "etc." often ends a sentence: it does when a capital follows.
		return w != "etc" || i+1 >= len(sp.ch) || !isUpper(sp.q[sp.ch[i+1].s:])
	}
	if len(w) == 1 && isUpper(sp.q[sp.ch[i].s:]) {
		return true // an initial: "John F. Kennedy"
	}
	// "U.S", "e.g", "F.N.B", "a.m": every part one or two letters.
	if !strings.Contains(w, ".") {
		return false
	}
	for part := range strings.SplitSeq(w, ".") {
		if len(part) == 0 || len(part) > 2 || strings.IndexFunc(part, func(r rune) bool { return r < 'a' || r > 'z' }) >= 0 {
			return false
		}
	}
	return true
}

// enumeration finds the markers of a numbered list ("1." "2." or "1)" "2)" or "a)" "b)"):
// chunks of their own, numbered in order from 1 (or a); one marker alone is no list.
func (sp *splitter) enumeration() map[int]bool {
	var at []int
	next := 0
	for i, c := range sp.ch {
		s := sp.q[c.cs:c.ce]
		s = strings.TrimPrefix(s, "(")
		if len(s) < 2 || (s[len(s)-1] != '.' && s[len(s)-1] != ')') {
			continue
		}
		body := s[:len(s)-1]
		v := 0
		switch {
		case len(body) == 1 && body[0] >= 'a' && body[0] <= 'j' && s[len(s)-1] == ')':
			v = int(body[0]-'a') + 1
		case len(body) <= 2 && strings.Trim(body, "0123456789") == "":
			v = int(body[0] - '0')
			if len(body) == 2 {
				v = v*10 + int(body[1]-'0')
			}
		default:
			continue
		}
		if v == next+1 && !sp.protected(c.cs) {
			at = append(at, i)
			next = v
		}
	}
	if len(at) < 2 {
		return nil
	}
	m := make(map[int]bool, len(at))
	for _, i := range at {
		m[i] = true
	}
	return m
}

// inline strips the cue that opens a segment and cuts it at "and", "," and cue words
// before a task verb; it appends the pieces to out.
func (sp *splitter) inline(sg segment, out []piece) []piece {
	k, cued := sg.c0, sg.cued
	for k < sg.c1-1 {
		if sp.word(k) == "and" && sp.ch[k].punct == 0 {
			k++
			continue
		}
		n, _ := sp.cueAt(k, sg.c1)
		// A cue is one when a comma or a task follows it: "Next week I'm away" has none.
		if n == 0 || k+n >= sg.c1 || (sp.ch[k+n-1].punct != pComma && sp.kind(k+n, sg.c1) == notTask) {
			break
		}
		k += n
		cued = true
	}
	if k >= sg.c1 {
		k = sg.c0
	}
	sp.ch[k].first = true
	cur := piece{c0: k, cued: cued, strong: true}
	colon := false // past a ':' the words are a payload ("Run this query: SELECT a, b …")
	for i := k + 1; i < sg.c1; i++ {
		colon = colon || (sp.ch[i-1].punct&pColon != 0 && !sp.protected(sp.ch[i-1].punctAt))
		body, verb, c, ok := sp.separator(cur.c0, i, sg.c1)
		if !ok || (colon && !c) {
			continue
		}
		cur.c1 = i
		out = append(out, cur)
		cur = piece{c0: body, cued: c}
		i = verb
	}
	cur.c1 = sg.c1
	return append(out, cur)
}

// cueAt matches a cue phrase at chunk i: its length in chunks and whether it may stand
// alone between two tasks. Only the last word of the phrase may carry a comma.
func (sp *splitter) cueAt(i, end int) (int, bool) {
	for _, c := range cues[sp.word(i)] {
		n := len(c.words)
		if i+n > end {
			continue
		}
		ok := true
		for j, w := range c.words {
			ch := sp.ch[i+j]
			if sp.word(i+j) != w || (ch.punct != 0 && (j < n-1 || ch.punct != pComma)) || ch.s != ch.cs {
				ok = false
				break
			}
		}
		if ok && !sp.protected(sp.ch[i].cs) {
			return n, c.bare
		}
	}
	return 0, false
}

// separator decides whether a new task starts at chunk i of the piece that begins at p0:
// "and", ",", ", and" or a cue before a task verb, the piece before being a task with an
// object. It returns the first chunk of the new piece's text, the chunk of its verb and
// whether a cue word introduced it.
func (sp *splitter) separator(p0, i, end int) (body, verb int, cued, ok bool) {
	prev := sp.ch[i-1]
	comma := prev.punct == pComma && !sp.protected(prev.punctAt)
	if (prev.punct != 0 && !comma) || (!comma && sp.word(i) != "and" && cues[sp.word(i)] == nil) ||
		sp.protected(sp.ch[i].cs) {
		return 0, 0, false, false
	}
	and := false
	j := i
	if sp.word(j) == "and" && sp.ch[j].punct == 0 {
		and = true
		j++
	}
	for j < end {
		n, bare := sp.cueAt(j, end)
		if n == 0 || (!bare && !and && !comma && !cued) {
			break
		}
		cued = true
		j += n
	}
	if !and && !comma && !cued {
		return 0, 0, false, false
	}
	body = j
	for j < end && (sp.word(j) == "please" || sp.word(j) == "kindly" || sp.word(j) == "just") {
		j++
	}
	k := j
	if k+1 >= end || sp.ch[k].punct != 0 || sp.ch[k].s != sp.ch[k].cs || isUpper(sp.q[sp.ch[k].s:]) {
		// A verb needs an object; "search, replace" is a list; "Pride and Prejudice" a title.
		return 0, 0, false, false
	}
	switch sp.word(k + 1) {
	case "of", "and", "or", "nor", "'s", "’s":
		return 0, 0, false, false // "count of users": a noun
	}
	// The piece before must be a task of its own, with an object: "search and replace
	// text" and "look up and book" share one.
	kind, v := sp.start(p0, i)
	switch kind {
	case notTask:
		return 0, 0, false, false
	case imperative:
		if !sp.hasObject(v+1, i) {
			return 0, 0, false, false
		}
	default:
		if i-p0 < 2 {
			return 0, 0, false, false
		}
	}
	w := sp.word(k)
	ambiguous, isVerb := verbs[w]
	switch {
	case isVerb && cued:
	case isVerb:
		// "Show me read and write permissions": a verb right before "and" (not "my order")
		// coordinates two verbs or modifiers of one noun.
		if _, ok := verbs[sp.word(i-1)]; ok && i-1 > p0 && !determiners[sp.word(i-2)] {
			return 0, 0, false, false
		}
		// "Show me how to install Docker and configure it": the second verb continues
		// the clause of "how to".
		for m := i - 1; m > p0+1; m-- {
			if sp.word(m-1) == "to" && whTo[sp.word(m-2)] {
				return 0, 0, false, false
			}
		}
		if ambiguous && !sp.opener(w, k+1) {
			return 0, 0, false, false
		}
	case cued && questionWords[w]:
	case and && !cued && whClause[w]:
		// "… and what time is it in Tokyo?": a second question naming something of its own.
		if s, _ := sp.anchors(k+1, end); !s {
			return 0, 0, false, false
		}
	default:
		return 0, 0, false, false
	}
	return body, k, cued, true
}

// hasObject: some word in [a, b) is not a particle ("look up" has none).
func (sp *splitter) hasObject(a, b int) bool {
	for m := a; m < b; m++ {
		if !particles[sp.word(m)] {
			return true
		}
	}
	return false
}

// opener says whether chunk i can begin the object of the ambiguous verb v: a determiner,
// a pronoun, a number, a name, a quoted string, a path, or a particle of v ("look up").
func (sp *splitter) opener(v string, i int) bool {
	w := sp.word(i)
	if openers[w] || verbParticles[v][w] {
		return true
	}
	r, _ := utf8.DecodeRuneInString(sp.q[sp.ch[i].cs:])
	return unicode.IsDigit(r) || unicode.IsUpper(r) || strings.ContainsRune("\"'`“‘$@#/~.", r)
}

func (sp *splitter) kind(a, b int) int {
	k, _ := sp.start(a, b)
	return k
}

// start classifies the words at the start of chunks [a, b): a task verb after polite
// openers ("please", "can you", "I want to", "help me"), a question, a request ("I need
// the report"), or none of them (context). For an imperative it returns the verb's chunk.
func (sp *splitter) start(a, b int) (int, int) {
	i := a
	at := func(k int) string {
		if k >= b {
			return ""
		}
		return sp.word(k)
	}
	for i < b-1 && politeWords[at(i)] {
		i++
	}
	switch at(i) {
	case "can", "could", "would", "will":
		if at(i+1) == "you" || at(i+1) == "u" {
			i += 2
			for politeWords[at(i)] && i < b-1 {
				i++
			}
			if at(i) == "help" && (at(i+1) == "me" || at(i+1) == "us") {
				i += 2
			}
		}
	case "help":
		if at(i+1) == "me" || at(i+1) == "us" {
			i += 2
			if at(i) == "to" {
				i++
			}
		}
	case "let's", "let’s", "lets":
		i++
	case "let":
		if at(i+1) == "me" || at(i+1) == "us" {
			if at(i+2) == "know" {
				return imperative, i + 2
			}
			i += 2
		}
	case "go":
		if at(i+1) == "ahead" && at(i+2) == "and" {
			i += 3
		}
	case "make", "be":
		if at(i+1) == "sure" && at(i+2) == "to" {
			i += 3
		}
	case "remember", "try":
		if at(i+1) == "to" {
			i += 2
		}
	case "don't", "don’t", "do":
		if at(i+1) == "forget" && at(i+2) == "to" {
			i += 3
		} else if at(i+1) == "not" && at(i+2) == "forget" && at(i+3) == "to" {
			i += 4
		}
	case "looking":
		if at(i+1) == "for" {
			return request, -1
		}
	case "need", "want":
		if at(i+1) != "to" {
			return request, -1
		}
		i += 2
	case "once", "after", "when":
		// "Once I have the price of Apple, convert it to euros": getting the price is a
		// task of its own ("when I get home" names nothing to get)
		if (at(i+1) == "i" || at(i+1) == "we") && gotVerbs[at(i+2)] && openers[at(i+3)] && i+4 < b {
			return request, -1
		}
	case "i", "we", "i'd", "we'd", "i’d", "we’d", "i'm", "i’m", "i've", "i’ve", "you", "im":
		return sp.subjectFirst(a, i, b, at)
	}
	return sp.taskAt(a, i, b, at)
}

// subjectFirst classifies chunks [a, b) whose first word after the polite ones, chunk i,
// is their subject: "I want to book", "I'd like the report", "you have to call", "we need
// a hotel". at(k) is chunk k's word ("" from b on).
func (sp *splitter) subjectFirst(a, i, b int, at func(int) string) (int, int) {
	j := i + 1
	for at(j) == "also" || at(j) == "really" || at(j) == "just" || at(j) == "still" {
		j++
	}
	switch v := at(j); {
	case requestVerbs[v]:
		j++
	case v == "would" && (at(j+1) == "like" || at(j+1) == "love"):
		j += 2
	case (v == "like" || v == "love") && strings.HasSuffix(at(i), "d"): // "I'd like"
		j++
	case v == "have" || v == "should" || v == "must":
		if v == "have" && at(j+1) != "to" {
			return sp.intro(i, b)
		}
		j++
	case v == "am" && at(j+1) == "looking" && at(j+2) == "for", v == "looking" && at(j+1) == "for":
		return request, -1
	default:
		return sp.intro(i, b)
	}
	if at(j) == "you" {
		j++
	}
	if at(j) != "to" {
		if j < b {
			return request, -1
		}
		return notTask, -1
	}
	i = j + 1
	if _, ok := verbs[at(i)]; !ok && i < b {
		// "I'd like to know the weather" asks; "I want to go to Paris" tells.
		if askVerbs[at(i)] {
			return request, -1
		}
		return notTask, -1
	}
	return sp.taskAt(a, i, b, at)
}

// taskAt classifies chunks [a, b) from chunk i, the first word after their openers: a
// task verb, a question word when nothing opened them, else a task after an introductory
// phrase or none. at(k) is chunk k's word ("" from b on).
func (sp *splitter) taskAt(a, i, b int, at func(int) string) (int, int) {
	if i >= b {
		return notTask, -1
	}
	if _, ok := verbs[at(i)]; ok {
		return imperative, i
	}
	if i == a && questionWords[at(i)] {
		return question, -1
	}
	return sp.intro(i, b)
}

// intro finds a task after an introductory phrase: "For the Paris trip, book a hotel".
func (sp *splitter) intro(i, b int) (int, int) {
	for m := i + 1; m < b-1; m++ {
		if sp.ch[m-1].punct == pComma && !isUpper(sp.q[sp.ch[m].s:]) {
			if _, ok := verbs[sp.word(m)]; ok {
				return imperative, m
			}
		}
	}
	return notTask, -1
}

// anchors says whether chunks [a, b) name something of their own: strong is a name (a
// capital not opening a sentence), an identifier, a path, a URL, an email address, a file
// name or a quoted string; weak is a number, a date, an amount.
func (sp *splitter) anchors(a, b int) (strong, weak bool) {
	for m := a; m < b && !strong; m++ {
		c := sp.ch[m]
		if c.s == c.e {
			continue
		}
		w := sp.q[c.s:c.e]
		if c.s > c.cs && strings.ContainsRune("\"'`“‘", rune(sp.q[c.cs])) {
			strong = true
			break
		}
		var upper, digits, letters int
		for _, r := range w {
			switch {
			case unicode.IsUpper(r):
				upper++
				letters++
			case unicode.IsLetter(r):
				letters++
			case unicode.IsDigit(r):
				digits++
			}
		}
		switch {
		case upper > 0 && !c.first && !isI(w):
			strong = true
		case strings.ContainsAny(w, "@/\\_#") || (strings.Contains(w, "$") && letters > 0 && digits == 0):
			strong = true
		case strings.Contains(w, ".") && letters > 0 && !sp.abbreviation(m):
			strong = true // report.pdf, example.com, v1.2
		case digits > 0 && letters > 0 && !unitLike(w):
			strong = true // d97fg1saS9, A380
		case digits > 0:
			weak = true
		}
	}
	return strong, weak
}

func isI(w string) bool {
	return w == "I" || strings.HasPrefix(w, "I'") || strings.HasPrefix(w, "I’") || w == "OK"
}

// unitLike: a number with a short lower-case unit: 8pm, 2nd, 10am, 5km, 24h.
func unitLike(w string) bool {
	i := strings.IndexFunc(w, func(r rune) bool { return !unicode.IsDigit(r) })
	if i <= 0 {
		return false
	}
	rest := w[i:]
	return len(rest) <= 3 && strings.IndexFunc(rest, func(r rune) bool { return r < 'a' || r > 'z' }) < 0
}

// backref says whether chunks [a, b) point back at what an earlier piece named ("which",
// "its", "for each of them"), and whether one of them picks among it ("which",
// "whichever"); the first word is skipped ("Which flights …?" asks).
func (sp *splitter) backref(a, b int) (any, picks bool) {
	for m := a + 1; m < b; m++ {
		w := sp.word(m)
		if w == "which" || w == "whichever" {
			return true, true
		}
		if backrefs[w] || (m+1 < b && backrefPairs[[2]string{w, sp.word(m + 1)}]) {
			any = true
		}
	}
	return any, false
}

// join classifies the pieces and joins back those that are not tasks of their own:
//
//   - fillers ("Thanks!", "Please help.") are dropped;
//   - context (no task verb, question or request; a preamble ending in ':') joins the
//     first task after it when it comes before any task, else the task before it;
//   - a task that cannot be searched alone joins the task before it, unless it names
//     something of its own (a name, an identifier, a path, a quoted string): one that picks
//     ("which", "whichever"); one that points back (its, their, for each of them), unless
//     it is a verb phrase after "and" or a comma, which names its tool by verb and object;
//     one that works on earlier results without a cue ("count the rows", "show the
//     cheapest", "use it"); and a sentence without a cue and without a number either,
//     unless it and the task before are plain commands in a query that names nothing.
func (sp *splitter) join(ps []piece) []piece {
	kept := ps[:0]
	for i, p := range ps {
		if sp.filler(p.c0, p.c1) {
			continue
		}
		p.kind, p.verb = sp.start(p.c0, p.c1)
		p.stated = sp.stated(p.c0, p.c1)
		if i < len(ps)-1 && sp.ch[p.c1-1].punct&pColon != 0 {
			p.kind = notTask
		}
		kept = append(kept, p)
	}
	var tasks []piece
	pending := -1
	for _, p := range kept {
		switch {
		case p.kind != notTask && pending >= 0:
			p.c0, pending = pending, -1
			tasks = append(tasks, p)
		case p.kind != notTask:
			tasks = append(tasks, p)
		case len(tasks) > 0:
			tasks[len(tasks)-1].c1 = p.c1
		case pending < 0:
			pending = p.c0
		}
	}
	if len(tasks) < 2 {
		return tasks
	}
	named, _ := sp.anchors(0, len(sp.ch))
	out := tasks[:1]
	for _, p := range tasks[1:] {
		strong, weak := sp.anchors(p.c0, p.c1)
		ref, picks := sp.backref(p.c0, p.c1)
		var dependent bool
		switch {
		case strong:
		case picks || (ref && (p.strong || p.kind != imperative)):
			// Within a sentence, "… and create an issue for each of them" still names its
			// tool by verb and object; a sentence of its own ("Give me its net income.")
			// needs the name the sentence before gave.
			dependent = true
		case !p.cued && p.kind == imperative && sp.continues(p):
			dependent = true
		case p.strong && !p.cued && !weak:
			// A sentence naming nothing continues the one before, unless both are plain
			// commands in a query that names nothing ("Set a timer for 10 minutes. Play
			// some jazz."): "Is Pentair up today? Show me the current price.", "I need to
			// buy a gift. Find some jewelry stores nearby."
			prev := out[len(out)-1]
			dependent = named || p.kind != imperative || prev.kind != imperative || prev.stated
		}
		if dependent {
			out[len(out)-1].c1 = p.c1
		} else {
			out = append(out, p)
		}
	}
	return out
}

// continues says whether the imperative p works on what the task before it found: a
// result verb ("count the rows", "compare them"), or a verb that shows or picks with a
// pronoun or a superlative for object ("show the cheapest", "use it in a sentence").
func (sp *splitter) continues(p piece) bool {
	w := sp.word(p.verb)
	if resultVerbs[w] {
		return true
	}
	if !presentVerbs[w] {
		return false
	}
	m := p.verb + 1
	for m < p.c1 && (sp.word(m) == "me" || sp.word(m) == "us") {
		m++
	}
	switch sp.word(m) {
	case "it", "them", "those", "these", "both", "all", "everything", "":
		return true
	case "the", "a", "an":
		m++
	}
	return superlatives[sp.word(m)]
}

// stated: the piece's verb follows a subject ("I need to", "we want to", "you should").
func (sp *splitter) stated(a, b int) bool {
	for a < b-1 && politeWords[sp.word(a)] {
		a++
	}
	return subjects[sp.word(a)]
}

// filler: chunks [a, b) are only thanks, greetings and "please help".
func (sp *splitter) filler(a, b int) bool {
	for m := a; m < b; m++ {
		if w := sp.word(m); w != "" && !fillers[w] {
			return false
		}
	}
	return true
}

func isUpper(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r)
}

// asciiLower lower-cases the ASCII letters of s and leaves every other byte alone, so that
// offsets into s and into the result agree.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
