// Package meaning maps a text to a sparse vector of what its words mean, built from the
// lexicon (WordNet): each content word stands for the words that describe its senses (the
// sense's synonyms, its hypernyms' words and the content words of its definition), each
// weighted by how rare it is among the lexicon's sense descriptions. Two texts that share no
// word can still share meaning: "clear skies" and "weather forecast" both lead to
// atmosphere; "purchase" and "buy" share a sense. The cosine of two such vectors is the
// meaning branch of a search (docs/search.md#meaning).
package meaning

import (
	"hash/fnv"
	"math"
	"slices"
	"sync"

	"github.com/pgvector/pgvector-go"

	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/lexicon"
)

// Dims is the dimension of a meaning vector: description terms are hashed into it (FNV-1a),
// wide enough that two terms of one text seldom share a dimension.
const Dims = 1 << 20

// MaxTerms is how many terms (the heaviest) a vector keeps: 64 ranked the paraphrase set's
// development half as 128 did (docs/search.md#meaning), in 0.5 KB a tool.
const MaxTerms = 64

// sensesPerWord is how many senses of a word (Lexicon.Senses order: most frequent first)
// describe it; sense i weighs 1/(i+1).
const sensesPerWord = 3

// Space computes meaning vectors from one lexicon. It is read-only once built and safe for
// concurrent use.
type Space struct {
	lex *lexicon.Lexicon
	// terms are each synset's description terms (forEachTerm, in its order), as their
	// dimension and rarity ln(1 + synsets / synsets the term describes)
	terms [][]term
	// nameWeight is the weight of a name's own term: the rarity of a term only one synset
	// has.
	nameWeight float32
}

// nameTerm prefixes a name's own term, so that it is no description term of any sense.
const nameTerm = "name:"

type term struct {
	dim    int32
	rarity float32
}

var builtin = sync.OnceValues(func() (*Space, error) {
	lex, err := lexicon.Builtin()
	if err != nil {
		return nil, err
	}
	return New(lex), nil
})

// Builtin is the space of the built-in lexicon (lexicon.Builtin), built on the first call
// and shared by every later call. A change to the rules of this package changes what the
// stored vectors mean: its migration queues every tool for the lexical indexer, which
// writes them again.
func Builtin() (*Space, error) { return builtin() }

// New builds a space from a lexicon: one pass over its synsets to count how many describe
// each term, one to list each synset's terms with their rarity.
func New(lex *lexicon.Lexicon) *Space {
	df := map[string]int{}
	for id := range lex.Len() {
		seen := map[string]bool{}
		forEachTerm(lex, lexicon.SynsetID(id), func(term string) {
			if !seen[term] {
				seen[term] = true
				df[term]++
			}
		})
	}
	n := float64(lex.Len())
	terms := make([][]term, lex.Len())
	for id := range lex.Len() {
		forEachTerm(lex, lexicon.SynsetID(id), func(t string) {
			terms[id] = append(terms[id], term{dim: dimension(t), rarity: float32(math.Log(1 + n/float64(df[t])))})
		})
	}
	return &Space{lex: lex, terms: terms, nameWeight: float32(math.Log(1 + n))}
}

// forEachTerm calls f with every description term of a synset: its words, its hypernyms'
// words and its gloss words, stemmed.
func forEachTerm(lex *lexicon.Lexicon, id lexicon.SynsetID, f func(string)) {
	s := lex.Synset(id)
	for _, w := range s.Words {
		f(embed.Stem(w))
	}
	for _, h := range s.Hypernyms {
		for _, w := range lex.Synset(h).Words {
			f(embed.Stem(w))
		}
	}
	for _, w := range s.Gloss {
		f(embed.Stem(w))
	}
}

// Vector is the meaning of a text (a query, or a tool's name, title and description): the
// sum over its content words (each word once) of its senses' description terms, sense i
// weighted 1/(i+1) and each term by its rarity (a word the text uses as a name, Names,
// stands for itself: one term of its own instead of its senses), the MaxTerms heaviest
// terms kept, normalized to unit length (so the inner product of two
// vectors is their cosine). ok is false when no word of the text has a sense.
func (s *Space) Vector(text string) (v pgvector.SparseVector, ok bool) {
	names := Names(text)
	weights := make(map[int32]float32, 1024)
	seen := map[string]bool{}
	for _, w := range embed.Words(text) {
		if len(w) < 3 || embed.IsStopword(w) || seen[w] {
			continue
		}
		seen[w] = true
		senses := s.lex.Senses(w)
		if names[w] && len(senses) > 0 {
			// A name stands for itself: one term of its own, as rare as a term can be, so
			// that "Linear" in a request meets the Linear server's tools, not lines.
			weights[dimension(nameTerm+w)] += s.nameWeight
			continue
		}
		for i, id := range senses[:min(sensesPerWord, len(senses))] {
			sw := 1 / float32(i+1)
			for _, t := range s.terms[id] {
				weights[t.dim] += sw * t.rarity
			}
		}
	}
	if len(weights) == 0 {
		return pgvector.SparseVector{}, false
	}
	return unitTop(weights, MaxTerms), true
}

// dimension is a term's index in a vector (0-based, as pgvector-go counts).
func dimension(term string) int32 {
	h := fnv.New32a()
	h.Write([]byte(term))
	return int32(h.Sum32() % Dims)
}

// unitTop keeps the n heaviest elements (the smaller dimension first on a tie) and scales
// them to unit length, summing in that order (the same vector for the same text, always).
func unitTop(weights map[int32]float32, n int) pgvector.SparseVector {
	type elem struct {
		dim int32
		w   float32
	}
	before := func(a, b elem) bool { return a.w > b.w || a.w == b.w && a.dim < b.dim }
	top := make([]elem, 0, n+1) // heaviest first
	for d, w := range weights {
		e := elem{d, w}
		if len(top) == n && !before(e, top[n-1]) {
			continue
		}
		k, _ := slices.BinarySearchFunc(top, e, func(x, e elem) int {
			if before(x, e) {
				return -1
			}
			return 1
		})
		top = slices.Insert(top, k, e)[:min(n, len(top)+1)]
	}
	var norm float64
	for _, e := range top {
		norm += float64(e.w) * float64(e.w)
	}
	inv := float32(1 / math.Sqrt(norm))
	out := make(map[int32]float32, len(top))
	for _, e := range top {
		out[e.dim] = e.w * inv
	}
	return pgvector.NewSparseVectorFromMap(out, Dims)
}
