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

// MaxTerms is how many terms (the heaviest) a vector keeps: pgvector indexes a sparse
// vector of at most 1,000 non-zero elements.
const MaxTerms = 64

// sensesPerWord is how many senses of a word (Lexicon.Senses order: most frequent first)
// describe it; sense i weighs 1/(i+1).
const sensesPerWord = 3

// Space computes meaning vectors from one lexicon. It is read-only once built and safe for
// concurrent use.
type Space struct {
	lex    *lexicon.Lexicon
	rarity map[string]float32 // per description term (stemmed): ln(synsets / synsets it describes)
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
// each term.
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
	rarity := make(map[string]float32, len(df))
	for term, c := range df {
		rarity[term] = float32(math.Log(1 + n/float64(c)))
	}
	return &Space{lex: lex, rarity: rarity}
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

// Vector is the meaning of a text: the sum over its content words (each word once) of its
// senses' description terms, sense i weighted 1/(i+1) and each term by its rarity, the
// MaxTerms heaviest terms kept, normalized to unit length (so the inner product of two
// vectors is their cosine). ok is false when no word of the text has a sense.
func (s *Space) Vector(text string) (v pgvector.SparseVector, ok bool) {
	weights := map[int32]float32{}
	seen := map[string]bool{}
	for _, w := range embed.Words(text) {
		if len(w) < 3 || embed.IsStopword(w) || seen[w] {
			continue
		}
		seen[w] = true
		senses := s.lex.Senses(w)
		for i, id := range senses[:min(sensesPerWord, len(senses))] {
			sw := 1 / float32(i+1)
			forEachTerm(s.lex, id, func(term string) {
				if r := s.rarity[term]; r > 0 {
					weights[dimension(term)] += sw * r
				}
			})
		}
	}
	if len(weights) == 0 {
		return pgvector.SparseVector{}, false
	}
	return unit(top(weights, MaxTerms)), true
}

// dimension is a term's index in a vector (0-based, as pgvector-go counts).
func dimension(term string) int32 {
	h := fnv.New32a()
	h.Write([]byte(term))
	return int32(h.Sum32() % Dims)
}

// top keeps the n heaviest elements (the smaller index first on a tie).
func top(weights map[int32]float32, n int) map[int32]float32 {
	if len(weights) <= n {
		return weights
	}
	idx := make([]int32, 0, len(weights))
	for i := range weights {
		idx = append(idx, i)
	}
	slices.SortFunc(idx, func(a, b int32) int {
		if weights[a] != weights[b] {
			if weights[a] > weights[b] {
				return -1
			}
			return 1
		}
		return int(a - b)
	})
	out := make(map[int32]float32, n)
	for _, i := range idx[:n] {
		out[i] = weights[i]
	}
	return out
}

func unit(weights map[int32]float32) pgvector.SparseVector {
	var norm float64
	for _, w := range weights {
		norm += float64(w) * float64(w)
	}
	inv := float32(1 / math.Sqrt(norm))
	for i := range weights {
		weights[i] *= inv
	}
	return pgvector.NewSparseVectorFromMap(weights, Dims)
}
