// Package lexicon is a compact English lexicon built from WordNet 3.0: for a word, its
// senses (synsets, most frequent first), and for a sense its one-word synonyms, its direct
// hypernyms and the first content words of its definition. It gives the offline providers
// (the heuristic enricher, the local embedder) a little meaning without model weights:
// "skies" leads to sky, whose definition speaks of the atmosphere; "purchase" and "buy"
// share a synset.
//
// The data is wordnet.txt.gz, written by ./gen from Debian's wordnet-base package (`make
// lexicon`) and embedded in the binary; LICENSE-WordNet beside it is WordNet's licence,
// which allows redistribution with its notice.
package lexicon

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

//go:embed wordnet.txt.gz
var wordnetGz []byte

// SynsetID identifies a synset within one Lexicon.
type SynsetID int32

// Synset is one sense: its part of speech ('n', 'v' or 'a'), one-word lemmas, direct
// hypernyms and the first content words of its gloss.
type Synset struct {
	POS       byte
	Words     []string
	Hypernyms []SynsetID
	Gloss     []string
}

// Lexicon is read-only once built and safe for concurrent use.
type Lexicon struct {
	synsets    []Synset
	hyponyms   [][]SynsetID // the inverse of the hypernym links, in synset order
	lemmas     map[string][]SynsetID
	exceptions map[string]string
}

// MalformedError is a lexicon file that does not parse.
type MalformedError struct {
	Line   int
	Reason string
}

func (e *MalformedError) Error() string {
	return fmt.Sprintf("lexicon: line %d: %s", e.Line, e.Reason)
}

var builtin = sync.OnceValues(func() (*Lexicon, error) { return Parse(wordnetGz) })

// Builtin is the lexicon embedded in the binary, parsed on the first call (about a second
// and 25 MB of heap on a 2-core machine, docs/benchmarks.md) and shared by every later call.
func Builtin() (*Lexicon, error) { return builtin() }

// MustBuiltin is Builtin for the providers that cannot work without it; the embedded file
// is the one this package's tests parse, so it panics only on a corrupt binary.
func MustBuiltin() *Lexicon {
	l, err := builtin()
	if err != nil {
		panic(err)
	}
	return l
}

// Parse reads a gzip'd lexicon file as ./gen writes it.
func Parse(gz []byte) (*Lexicon, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("lexicon: %w", err)
	}
	l := &Lexicon{lemmas: make(map[string][]SynsetID, 80000), exceptions: make(map[string]string, 6000)}
	intern := make(map[string]string, 100000)
	str := func(s string) string {
		if v, ok := intern[s]; ok {
			return v
		}
		intern[s] = s
		return s
	}
	words := func(s string) []string {
		f := strings.Fields(s)
		for i := range f {
			f[i] = str(f[i])
		}
		return f
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
	var maxRef SynsetID = -1
	for sc.Scan() {
		n++
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Split(line, "\t")
		switch {
		case f[0] == "S" && len(f) == 5 && len(f[1]) == 1:
			s := Synset{POS: f[1][0], Words: words(f[3]), Gloss: words(f[4])}
			for _, h := range strings.Fields(f[2]) {
				id, err := strconv.Atoi(h)
				if err != nil {
					return nil, &MalformedError{Line: n, Reason: "hypernym " + strconv.Quote(h)}
				}
				s.Hypernyms = append(s.Hypernyms, SynsetID(id))
				maxRef = max(maxRef, SynsetID(id))
			}
			l.synsets = append(l.synsets, s)
		case f[0] == "L" && len(f) == 3:
			var ids []SynsetID
			for _, x := range strings.Fields(f[2]) {
				id, err := strconv.Atoi(x)
				if err != nil {
					return nil, &MalformedError{Line: n, Reason: "synset " + strconv.Quote(x)}
				}
				ids = append(ids, SynsetID(id))
				maxRef = max(maxRef, SynsetID(id))
			}
			l.lemmas[str(f[1])] = ids
		case f[0] == "E" && len(f) == 3:
			l.exceptions[f[1]] = str(f[2])
		default:
			return nil, &MalformedError{Line: n, Reason: "unknown record"}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("lexicon: %w", err)
	}
	if int(maxRef) >= len(l.synsets) {
		return nil, &MalformedError{Line: n, Reason: fmt.Sprintf("synset %d referenced, %d defined", maxRef, len(l.synsets))}
	}
	l.hyponyms = make([][]SynsetID, len(l.synsets))
	for i, s := range l.synsets {
		for _, h := range s.Hypernyms {
			l.hyponyms[h] = append(l.hyponyms[h], SynsetID(i))
		}
	}
	return l, nil
}

// Len is the number of synsets.
func (l *Lexicon) Len() int { return len(l.synsets) }

// Synset returns the synset id (of this lexicon).
func (l *Lexicon) Synset(id SynsetID) Synset { return l.synsets[id] }

// Hyponyms are the synsets whose direct hypernym is id (chore under task), in synset order;
// only those kept in the lexicon (a first sense of some word, or such a sense's hypernym).
// The slice is shared: do not modify it.
func (l *Lexicon) Hyponyms(id SynsetID) []SynsetID { return l.hyponyms[id] }

// detachments are WordNet's morphological rules (morphy): an inflected ending and the
// base ending it may come from, nouns, verbs and adjectives in turn.
var detachments = [...][2]string{
	{"ies", "y"}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"},
	{"es", "e"}, {"es", ""}, {"s", ""}, {"ied", "y"}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""},
	{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"},
}

// Lemma is the dictionary form of a lowercase word: the word itself when it is a lemma,
// else its irregular base (mice → mouse), else the first base WordNet's detachment rules
// give that is a lemma (skies → sky, hiking → hike); "" when there is none.
func (l *Lexicon) Lemma(word string) string {
	if _, ok := l.lemmas[word]; ok {
		return word
	}
	if b, ok := l.exceptions[word]; ok {
		if _, ok := l.lemmas[b]; ok {
			return b
		}
	}
	for _, d := range detachments {
		if len(word) > len(d[0])+1 && strings.HasSuffix(word, d[0]) {
			b := word[:len(word)-len(d[0])] + d[1]
			if _, ok := l.lemmas[b]; ok {
				return b
			}
		}
	}
	return ""
}

// Senses are the synsets of a lowercase word's lemma (Lemma): up to three senses of each
// part of speech, the parts of speech in the order of how often WordNet's corpus tagged the
// lemma with them ("buy" as a verb first), each in WordNet's sense order (most frequent
// first). The slice is shared: do not modify it.
func (l *Lexicon) Senses(word string) []SynsetID {
	if b := l.Lemma(word); b != "" {
		return l.lemmas[b]
	}
	return nil
}
