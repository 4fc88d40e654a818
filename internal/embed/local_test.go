package embed

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/toolgate/toolgate/internal/wordvec"
)

func cos(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestLocalDeterministicAndNormalized(t *testing.T) {
	l := NewLocal(0)
	if l.Dims() != 384 || l.Model() != "local-hash-v2-384" {
		t.Fatalf("got %s/%d", l.Model(), l.Dims())
	}
	texts := []string{"get stock price", "Return the most recent trading price for Apple's stock", ""}
	a, err := l.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewLocal(384).Embed(context.Background(), texts)
	for i := range texts {
		if !slices.Equal(a[i], b[i]) {
			t.Fatalf("text %d embedded differently", i)
		}
	}
	if n := cos(a[0], a[0]); math.Abs(n-1) > 1e-5 {
		t.Fatalf("norm² %v", n)
	}
	if n := cos(a[2], a[2]); n != 0 {
		t.Fatalf("empty text: norm² %v, want 0", n)
	}
}

func TestLocalSimilarity(t *testing.T) {
	l := NewLocal(384)
	v := func(s string) []float32 { return l.Vector(s) }
	q := v("stock price of Apple")
	apple := v("get apple current stock price")
	appleDesc := v("Return the most recent trading price for Apple's stock, or -1 if unavailable.")
	weather := v("get weather forecast for a city")
	msft := v("get microsoft net income")
	if cos(q, apple) <= cos(q, weather) || cos(q, apple) <= cos(q, msft) {
		t.Fatalf("query/apple %.3f, weather %.3f, msft %.3f", cos(q, apple), cos(q, weather), cos(q, msft))
	}
	if cos(q, appleDesc) <= cos(q, weather) {
		t.Fatalf("query/apple description %.3f <= weather %.3f", cos(q, appleDesc), cos(q, weather))
	}
	// identifier forms share features with spaced words
	if c := cos(v("getStockPrice"), v("get_stock_price")); c < 0.99 {
		t.Fatalf("camel vs snake: %.3f", c)
	}
	// inflections are close
	if cos(v("stock prices"), v("stock price")) < 0.6 {
		t.Fatalf("plural: %.3f", cos(v("stock prices"), v("stock price")))
	}
}

func TestWords(t *testing.T) {
	cases := map[string][]string{
		"get_apple_current_stock_price": {"get", "apple", "current", "stock", "price"},
		"getHTTPServerURL2":             {"get", "http", "server", "url", "2"},
		"Apple's revenue":               {"apple", "revenue"},
		"send-email.v2":                 {"send", "email", "v", "2"},
	}
	for in, want := range cases {
		if got := Words(in); !slices.Equal(got, want) {
			t.Errorf("Words(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestLocalEmbedWeighted(t *testing.T) {
	l := NewLocal(0)
	ctx := context.Background()
	got, err := l.EmbedWeighted(ctx, []string{"provide the weather forecast", "weather forecast"}, map[string]float64{"provide": 0, "weather": 1, "forecast": 1})
	if err != nil {
		t.Fatal(err)
	}
	// a word of weight 0 is gone; the compact form of the whole text is the only difference
	if cos := cos(got[0], l.Vector("weather forecast")); cos < 0.95 {
		t.Errorf("weight 0 kept the word: cosine %.3f with the text without it", cos)
	}
	// without weights the vector is the document vector, bit for bit
	plain, _ := l.EmbedWeighted(ctx, []string{"provide the weather forecast"}, nil)
	if !slices.Equal(plain[0], l.Vector("provide the weather forecast")) {
		t.Error("EmbedWeighted without weights differs from Vector")
	}
	// a rarer word pulls the query toward the documents that have it
	docA, docB := l.Vector("weather forecast for a city"), l.Vector("provide stock data")
	q, _ := l.EmbedWeighted(ctx, []string{"provide weather"}, map[string]float64{"provide": 0.1, "weather": 5})
	if cos(q[0], docA) <= cos(q[0], docB) {
		t.Errorf("weighted query closer to the common word's document: %.3f vs %.3f", cos(q[0], docA), cos(q[0], docB))
	}
	if w := QueryWords([]string{"Provide the getWeather data", "weather again"}); !slices.Equal(w, []string{"provide", "get", "weather", "data", "again"}) {
		t.Errorf("QueryWords: %q", w)
	}
}

// A Chinese word shares the character-pair features of every clause holding it: "车站"
// (station) is closer to a description about stations than to one about tickets, which it
// was not when a clause was one opaque word; text without CJK characters embeds as before.
func TestLocalCJKWords(t *testing.T) {
	l := NewLocal(384)
	v := func(s string) []float32 { return l.Vector(s) }
	station := v("通过车站的 station_telecode 查询车站的详细信息")
	tickets := v("查询12306余票信息，返回车次、出发站和到达站")
	if q := v("车站"); cos(q, station) <= cos(q, tickets) || cos(q, station) < 0.2 {
		t.Errorf("车站: station %.3f, tickets %.3f", cos(q, station), cos(q, tickets))
	}
	if q := v("余票"); cos(q, tickets) <= cos(q, station) {
		t.Errorf("余票: tickets %.3f, station %.3f", cos(q, tickets), cos(q, station))
	}
	var pairs []string
	cjkFeatures("查询车站", 1, func(f string, _ float64) { pairs = append(pairs, f) })
	if want := []string{"k查询", "k询车", "k车站"}; !slices.Equal(pairs, want) {
		t.Errorf("pairs of 查询车站: %v, want %v", pairs, want)
	}
	pairs = nil
	cjkFeatures("stock", 1, func(f string, _ float64) { pairs = append(pairs, f) })
	if len(pairs) != 0 {
		t.Errorf("an English word has CJK features: %v", pairs)
	}
}

// The local embedder with word vectors relates texts that share no word, keeps the hashed
// embedder's cosine as (1 − WordShare) of its own, and is a space of its own.
func TestLocalWords(t *testing.T) {
	words, err := wordvec.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	l, h := NewLocalWords(384, words), NewLocal(384)
	if l.Dims() != 484 || l.Model() != "local-words-v1-484" {
		t.Fatalf("got %s/%d", l.Model(), l.Dims())
	}
	// the hashing embedder of the default dimension was the default before this one: its
	// vectors are remade at a start; of another dimension, or for another hashed part, it is
	// a switch to ask for
	if !OlderLocal(h.Model(), h.Dims(), l) {
		t.Fatal("the former default's space is not replaced by the default with word vectors")
	}
	if !OlderLocal("local-hash-v1-384", 384, l) || OlderLocal("local-hash-v3-384", 384, l) {
		t.Fatal("versions of the hashing embedder: v1 replaced, v3 (newer than this build's) kept")
	}
	h256, l256 := NewLocal(256), NewLocalWords(256, words)
	if OlderLocal(h256.Model(), h256.Dims(), l) || OlderLocal(h256.Model(), h256.Dims(), l256) {
		t.Fatal("a hashing space of a dimension someone chose replaced without being asked")
	}
	if OlderLocal(l.Model(), l.Dims(), h) || OlderLocal(l.Model(), l.Dims(), l) {
		t.Fatal("the space with word vectors taken as an older one")
	}
	q, near, far := "purchase a plane ticket", "buy an airline fare", "delete a folder"
	if cos(h.Vector(q), h.Vector(near)) > 0.1 {
		t.Fatalf("hashed: the texts share features (%.3f)", cos(h.Vector(q), h.Vector(near)))
	}
	if cn, cf := cos(l.Vector(q), l.Vector(near)), cos(l.Vector(q), l.Vector(far)); cn < 0.2 || cn < cf+0.15 {
		t.Fatalf("with word vectors: near %.3f, far %.3f", cn, cf)
	}
	a, b := "get stock price", "return the latest stock quote"
	content := func(text string) []float32 {
		var kept []string
		for _, w := range Words(text) {
			if !stopwords[w] {
				kept = append(kept, w)
			}
		}
		return Normalize64(words.Vector(kept))
	}
	hv, wv := cos(h.Vector(a), h.Vector(b)), cos(content(a), content(b))
	if got, want := cos(l.Vector(a), l.Vector(b)), (1-WordShare)*hv+WordShare*wv; math.Abs(got-want) > 1e-4 {
		t.Fatalf("cosine %.5f, want %.5f", got, want)
	}
	// a text of no word in the table keeps its hashed part alone, at unit length
	v := l.Vector("zzqx qqwv")
	if n := cos(v, v); math.Abs(n-1) > 1e-5 {
		t.Fatalf("norm² %v", n)
	}
	if c := cos(v[:384], h.Vector("zzqx qqwv")); math.Abs(c-1) > 1e-5 {
		t.Fatalf("hashed part %.5f of the hashed vector", c)
	}
}

// BenchmarkLocal embeds a tool description with the hashed embedder and with word vectors
// (docs/benchmarks.md).
func BenchmarkLocal(b *testing.B) {
	words, err := wordvec.Builtin()
	if err != nil {
		b.Fatal(err)
	}
	const text = "Return the most recent trading price for Apple's stock, or -1 if unavailable."
	for _, e := range []*Local{NewLocal(384), NewLocalWords(384, words)} {
		b.Run(e.Model(), func(b *testing.B) {
			for b.Loop() {
				e.Vector(text)
			}
		})
	}
}
