package lexicon

import (
	"bytes"
	"compress/gzip"
	"errors"
	"runtime"
	"slices"
	"testing"
)

func builtinT(t testing.TB) *Lexicon {
	t.Helper()
	l, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestLemma(t *testing.T) {
	l := builtinT(t)
	for word, want := range map[string]string{
		"sky": "sky", "skies": "sky", "hikes": "hike", "hiking": "hiking", "mice": "mouse", "purchased": "purchase",
		"folders": "folder", "xqzzy": "",
	} {
		if got := l.Lemma(word); got != want {
			t.Errorf("Lemma(%q) = %q, want %q", word, got, want)
		}
	}
}

// Words of one meaning share a synset, and a sense leads to its hypernyms and definition.
func TestSenses(t *testing.T) {
	l := builtinT(t)
	share := func(a, b string) bool {
		for _, s := range l.Senses(a) {
			if slices.Contains(l.Senses(b), s) {
				return true
			}
		}
		return false
	}
	if !share("purchase", "buy") || !share("folder", "folders") || share("sky", "buy") {
		t.Fatal("purchase/buy, folder/folders should share a sense, sky/buy should not")
	}
	// "buy" is tagged as a verb far more often than as a noun: its first sense is a verb's
	if s := l.Synset(l.Senses("buy")[0]); s.POS != 'v' || !slices.Contains(s.Words, "purchase") {
		t.Fatalf("first sense of buy: %+v", s)
	}
	sky := l.Synset(l.Senses("skies")[0])
	if !slices.Contains(sky.Gloss, "atmosphere") {
		t.Fatalf("sky's gloss words %v lack atmosphere", sky.Gloss)
	}
	weather := l.Synset(l.Senses("weather")[0])
	if weather.POS != 'n' || len(weather.Hypernyms) == 0 || !slices.Contains(weather.Gloss, "temperature") {
		t.Fatalf("weather's first sense %+v", weather)
	}
	if h := l.Synset(weather.Hypernyms[0]); len(h.Words) == 0 && len(h.Gloss) == 0 {
		t.Fatalf("weather's hypernym is empty: %+v", h)
	}
}

func TestParseRejectsMalformed(t *testing.T) {
	gz := func(s string) []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		_, _ = w.Write([]byte(s))
		_ = w.Close()
		return b.Bytes()
	}
	for _, bad := range []string{
		"S\tn\t\tsky\tatmosphere\nX\tsomething\n",
		"S\tn\t7\tsky\tatmosphere\n",     // hypernym not defined
		"L\tsky\t0\n",                    // synset not defined
		"S\tn\tseven\tsky\tatmosphere\n", // not a number
	} {
		var me *MalformedError
		if _, err := Parse(gz(bad)); !errors.As(err, &me) {
			t.Errorf("Parse(%q) = %v, want *MalformedError", bad, err)
		}
	}
	if _, err := Parse([]byte("not gzip")); err == nil {
		t.Fatal("Parse accepted bytes that are not gzip")
	}
	l, err := Parse(gz("# comment\nS\tn\t\tsky\tatmosphere\nL\tsky\t0\nE\tskies\tsky\n"))
	if err != nil || l.Len() != 1 || l.Lemma("skies") != "sky" {
		t.Fatalf("Parse of a small lexicon: %v %+v", err, l)
	}
}

// BenchmarkParse measures the one parse of the embedded lexicon: time per parse and the heap
// it keeps (docs/benchmarks.md).
func BenchmarkParse(b *testing.B) {
	var before, after runtime.MemStats
	var keep *Lexicon
	for b.Loop() {
		runtime.GC()
		runtime.ReadMemStats(&before)
		l, err := Parse(wordnetGz)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		keep = l
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MB-heap")
	b.ReportMetric(float64(len(wordnetGz))/(1<<20), "MB-file")
	runtime.KeepAlive(keep)
}

func TestHyponyms(t *testing.T) {
	l := builtinT(t)
	image := l.Senses("image")[0]
	var words []string
	for _, h := range l.Hyponyms(image) {
		words = append(words, l.Synset(h).Words...)
		if !slices.Contains(l.Synset(h).Hypernyms, image) {
			t.Fatalf("hyponym %+v of image does not name image as its hypernym", l.Synset(h))
		}
	}
	if len(words) == 0 {
		t.Fatalf("image's first sense %+v has no hyponyms", l.Synset(image))
	}
	if !slices.Contains(words, "visualization") {
		t.Fatalf("hyponyms of image %v lack visualization", words)
	}
}
