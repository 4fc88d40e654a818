package embed

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/toolgate/toolgate/internal/wordvec"
)

// DefaultLocalDims is the dimension of the local embedder when none is configured.
const DefaultLocalDims = 384

// Local is the built-in embedder that downloads no model weights: it hashes features of a text
// (lowercased words, their crude stems, identifier pieces, word bigrams, character
// 3/4-grams, and the character pairs of Chinese, Japanese and Korean text) into a fixed
// number of dimensions with signed feature hashing, weights each feature by sublinear term
// frequency and L2-normalizes the result. The same text always
// gives the same vector. It captures lexical and sub-word overlap, not meaning: "price" and
// "prices" land close, "price" and "cost" do not; NewLocalWords adds word vectors, which
// bring those closer.
type Local struct {
	dims int
	// words, when set, adds the meaning of the text's words (NewLocalWords)
	words *wordvec.Table
}

// NewLocal returns a local hashing embedder of dims dimensions (DefaultLocalDims when
// dims <= 0).
func NewLocal(dims int) *Local {
	if dims <= 0 {
		dims = DefaultLocalDims
	}
	return &Local{dims: dims}
}

// NewLocalWords returns the local embedder with word vectors: dims hashed dimensions (as
// NewLocal) followed by the wordvec.Dims of the text's word vector (wordvec.Table.Vector),
// the two parts weighted so that the cosine of two texts is (1 − WordShare) × their hashed
// cosine + WordShare × their word vectors' cosine (docs/search.md#word-vectors).
func NewLocalWords(dims int, words *wordvec.Table) *Local {
	l := NewLocal(dims)
	l.words = words
	return l
}

// WordShare is the word vectors' share of NewLocalWords's cosine, chosen on the paraphrase
// set's development half (0.4 over 0.25: docs/search.md#word-vectors).
const WordShare = 0.4

// Model names the space; the version changes whenever the features change, because
// vectors of two versions are not comparable.
func (l *Local) Model() string {
	if l.words != nil {
		return fmt.Sprintf(localWordsModelFormat, localWordsVersion, l.Dims())
	}
	return fmt.Sprintf(localModelFormat, localVersion, l.dims)
}

// localVersion is the version of the local embedder's features; localModelFormat its model
// name from the version and the dimension. A stored space of an older version is replaced
// by the first start of a newer one (OlderLocal, enrich.UpgradeLocalSpace).
const (
	localVersion     = 2
	localModelFormat = "local-hash-v%d-%d"
	// the same of NewLocalWords's: its own versions (the word table and the share count
	// too), its dimension the whole vector's
	localWordsVersion     = 1
	localWordsModelFormat = "local-words-v%d-%d"
)

// Dims is the vector length.
func (l *Local) Dims() int {
	if l.words != nil {
		return l.dims + wordvec.Dims
	}
	return l.dims
}

// Embed embeds each text; it never fails except on a cancelled context.
func (l *Local) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		out[i] = l.Vector(t)
	}
	return out, nil
}

// Feature weights: whole words and stems carry most of the signal, bigrams add phrase
// order, character n-grams give partial credit to morphological variants and typos.
var featureWeight = map[byte]float64{
	'w': 1.0,  // word
	's': 0.8,  // stem
	'b': 0.5,  // stem bigram
	'3': 0.25, // character 3-gram of the stem
	'4': 0.3,  // character 4-gram of the stem
	'c': 0.6,  // compact identifier form
	'k': 0.8,  // character pair of Chinese, Japanese or Korean text (cjk.go)
}

// Vector embeds one text.
func (l *Local) Vector(text string) []float32 { return l.vector(text, nil) }

// EmbedWeighted embeds query texts with each word's features scaled by idf[word], its
// rarity in the catalog (words missing from idf keep weight 1). Tool documents are embedded
// without weights (Embed): the query's weights alone make a word the whole catalog shares
// ("provide", "get", "data") count little in the cosine, as BM25's idf does, and the
// stored vectors never depend on catalog statistics that change.
func (l *Local) EmbedWeighted(ctx context.Context, texts []string, idf map[string]float64) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = l.vector(t, idf)
	}
	return out, nil
}

// QueryWords are the words of texts whose weights EmbedWeighted reads: the distinct words,
// stop words out, in order of first appearance.
func QueryWords(texts []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range texts {
		for _, w := range Words(t) {
			if !stopwords[w] && !seen[w] {
				seen[w] = true
				out = append(out, w)
			}
		}
	}
	return out
}

func (l *Local) vector(text string, idf map[string]float64) []float32 {
	weightOf := func(w string) float64 {
		if x, ok := idf[w]; ok {
			return x
		}
		return 1
	}
	counts := make(map[string]float64, 64)
	weights := make(map[string]float64, 64) // sum over the occurrences of a feature of its word's weight
	add := func(f string, w float64) {
		counts[f]++
		weights[f] += w
	}
	words := Words(text)
	var prev string
	var prevW, sumW float64
	var kept int
	for _, w := range words {
		if stopwords[w] {
			prev = ""
			continue
		}
		ww := weightOf(w)
		sumW += ww
		kept++
		st := Stem(w)
		add("w"+w, ww)
		add("s"+st, ww)
		if prev != "" {
			add("b"+prev+" "+st, math.Sqrt(prevW*ww))
		}
		prev, prevW = st, ww
		r := []rune("<" + st + ">")
		for n := 3; n <= 4; n++ {
			for i := 0; i+n <= len(r); i++ {
				add(string(rune('0'+n))+string(r[i:i+n]), ww)
			}
		}
		cjkFeatures(w, ww, add)
	}
	// An identifier written as one token ("getstockprice") shares its compact form with the
	// spaced one ("get stock price").
	// Its weight is the mean of its words' (exactly 1 without weights).
	if len(words) > 1 && len(words) <= 8 {
		cw := 1.0
		if kept > 0 {
			cw = sumW / float64(kept)
		}
		add("c"+strings.Join(words, ""), cw)
	}
	// Summing in sorted order makes the float result bit-for-bit reproducible.
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	v := make([]float64, l.dims)
	for _, f := range keys {
		h := fnv.New64a()
		_, _ = h.Write([]byte(f))
		sum := h.Sum64()
		sign := 1.0
		if sum>>63 == 1 {
			sign = -1
		}
		// the mean weight of the feature's occurrences: exactly 1 without weights
		v[sum%uint64(l.dims)] += sign * featureWeight[f[0]] * (1 + math.Log(counts[f])) * (weights[f] / counts[f])
	}
	if l.words == nil {
		return Normalize64(v)
	}
	return l.withWords(v, words)
}

// withWords is the NewLocalWords vector of a text: its hashed features (hashed) and the
// vector of its words, stop words out (weighted by the table's word frequencies, not by a
// query's idf), each at unit length and scaled by √(1 − WordShare) and √WordShare, then the
// whole at unit length (a text of no word in the table keeps its hashed part alone).
func (l *Local) withWords(hashed []float64, words []string) []float32 {
	var kept []string
	for _, w := range words {
		if !stopwords[w] {
			kept = append(kept, w)
		}
	}
	var ss float64
	for _, x := range hashed {
		ss += x * x
	}
	v := make([]float64, 0, l.Dims())
	for _, x := range hashed {
		if ss > 0 {
			x *= math.Sqrt((1 - WordShare) / ss)
		}
		v = append(v, x)
	}
	for _, x := range l.words.Vector(kept) {
		v = append(v, x*math.Sqrt(WordShare))
	}
	return Normalize64(v)
}

// Normalize64 is Normalize for a float64 accumulator: v scaled to unit L2 length as float32
// (all zeros stay zeros).
func Normalize64(v []float64) []float32 {
	var ss float64
	for _, x := range v {
		ss += x * x
	}
	out := make([]float32, len(v))
	if ss == 0 {
		return out
	}
	n := math.Sqrt(ss)
	for i, x := range v {
		out[i] = float32(x / n)
	}
	return out
}

// Words splits text into lowercase words, also splitting identifiers at snake_case,
// kebab-case, dots and camelCase boundaries ("getStockPrice" → get, stock, price).
func Words(text string) []string {
	var (
		out []string
		cur []rune
	)
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(text)
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if len(cur) > 0 {
				p := cur[len(cur)-1]
				lowerToUpper := unicode.IsUpper(r) && (unicode.IsLower(p) || unicode.IsDigit(p))
				// "HTTPServer": split before the last capital of a run followed by lowercase.
				acronymEnd := unicode.IsUpper(r) && unicode.IsUpper(p) && i+1 < len(rs) && unicode.IsLower(rs[i+1])
				letterDigit := unicode.IsDigit(r) != unicode.IsDigit(p)
				if lowerToUpper || acronymEnd || letterDigit {
					flush()
				}
			}
			cur = append(cur, r)
		case r == '\'' && len(cur) > 0 && i+1 < len(rs) && rs[i+1] == 's':
			// possessive: "Apple's" → apple
			flush()
		default:
			flush()
		}
	}
	flush()
	// drop the "s" left by a possessive
	kept := out[:0]
	for _, w := range out {
		if w != "s" {
			kept = append(kept, w)
		}
	}
	return kept
}

// Stem is a deliberately small suffix stripper (plural, -ing, -ed, -ly) so that inflected
// forms share a feature; it is not a linguistic stemmer.
func Stem(w string) string {
	if len(w) <= 3 {
		return w
	}
	for _, suf := range []struct{ s, r string }{
		{"ies", "y"}, {"sses", "ss"}, {"ing", ""}, {"edly", ""}, {"ed", ""}, {"ly", ""}, {"es", ""}, {"s", ""},
	} {
		if strings.HasSuffix(w, suf.s) && len(w)-len(suf.s)+len(suf.r) >= 3 {
			if suf.s == "s" && strings.HasSuffix(w, "ss") {
				return w
			}
			if suf.s == "es" && !strings.HasSuffix(w, "ches") && !strings.HasSuffix(w, "shes") && !strings.HasSuffix(w, "xes") {
				continue
			}
			return w[:len(w)-len(suf.s)] + suf.r
		}
	}
	return w
}

// stopwords carry no retrieval signal in tool descriptions and queries.
var stopwords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "for": true, "to": true, "in": true, "on": true,
	"and": true, "or": true, "is": true, "are": true, "be": true, "by": true, "with": true, "as": true,
	"at": true, "it": true, "its": true, "this": true, "that": true, "from": true, "if": true, "no": true,
	"what": true, "which": true, "me": true, "my": true, "i": true, "you": true, "your": true, "can": true,
	"please": true, "do": true, "does": true, "was": true, "were": true, "will": true, "would": true,
	"not": true, "any": true, "all": true, "such": true, "into": true, "over": true, "than": true,
}

// IsStopword reports whether Words' word w is one of the stop words the local embedder
// drops.
func IsStopword(w string) bool { return stopwords[w] }
