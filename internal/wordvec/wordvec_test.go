package wordvec

import (
	"math"
	"runtime"
	"testing"
)

func cos(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func TestBuiltinRelatesWordsThatShareNoLetters(t *testing.T) {
	tab, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	if tab.Len() != 50000 {
		t.Fatalf("%d words, want 50,000", tab.Len())
	}
	buy := tab.Vector([]string{"purchase", "ticket"})
	near := tab.Vector([]string{"buy", "fare"})
	far := tab.Vector([]string{"delete", "folder"})
	if cos(buy, near) <= cos(buy, far)+0.2 {
		t.Fatalf("purchase ticket ~ buy fare %.3f, ~ delete folder %.3f", cos(buy, near), cos(buy, far))
	}
	var n float64
	for _, x := range buy {
		n += x * x
	}
	if math.Abs(n-1) > 1e-9 {
		t.Fatalf("|v|² = %v, want 1", n)
	}
}

func TestUnknownWordsGiveZeros(t *testing.T) {
	tab, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range tab.Vector([]string{"zzqx", "qqwv", "天气"}) {
		if x != 0 {
			t.Fatal("a vector from words the table does not hold")
		}
	}
}

func TestUnrelatedTextsAreApart(t *testing.T) {
	tab, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	a := tab.Vector([]string{"weather", "forecast", "tomorrow"})
	b := tab.Vector([]string{"merge", "pull", "request"})
	if c := cos(a, b); c > 0.3 {
		t.Fatalf("weather forecast ~ merge pull request %.3f", c)
	}
}

func TestParseRejectsTruncatedData(t *testing.T) {
	if _, err := Parse([]byte("not gzip")); err == nil {
		t.Fatal("no error for bytes that are not gzip")
	}
}

// BenchmarkParse measures the one parse of the embedded table: time per parse and the heap
// it keeps (docs/benchmarks.md).
func BenchmarkParse(b *testing.B) {
	var before, after runtime.MemStats
	var keep *Table
	for b.Loop() {
		runtime.GC()
		runtime.ReadMemStats(&before)
		t, err := Parse(wordsGz)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		keep = t
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MB-heap")
	b.ReportMetric(float64(len(wordsGz))/(1<<20), "MB-file")
	runtime.KeepAlive(keep)
}
