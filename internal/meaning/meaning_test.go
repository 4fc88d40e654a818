package meaning_test

import (
	"math"
	"testing"

	"github.com/pgvector/pgvector-go"

	"github.com/toolgate/toolgate/internal/meaning"
)

func space(t *testing.T) *meaning.Space {
	t.Helper()
	s, err := meaning.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func cosine(a, b pgvector.SparseVector) float64 {
	at := map[int32]float32{}
	for i, d := range a.Indices() {
		at[d] = a.Values()[i]
	}
	var s float64
	for i, d := range b.Indices() {
		s += float64(at[d] * b.Values()[i])
	}
	return s
}

func vector(t *testing.T, s *meaning.Space, text string) pgvector.SparseVector {
	t.Helper()
	v, ok := s.Vector(text)
	if !ok {
		t.Fatalf("%q has no meaning", text)
	}
	return v
}

// Texts that share no word meet by what their words mean, closer than unrelated ones.
func TestTextsWithoutACommonWordShareMeaning(t *testing.T) {
	s := space(t)
	for _, c := range []struct{ query, related, unrelated string }{
		{"purchase a car", "buy an automobile", "paint the garden fence"},
		{"clear skies and mild temperatures", "weather forecast for a city", "stock price of a company"},
		{"shelve my unfinished edits", "stash changes in a git repository", "send an email to a customer"},
	} {
		q := vector(t, s, c.query)
		rel, unrel := cosine(q, vector(t, s, c.related)), cosine(q, vector(t, s, c.unrelated))
		if rel <= unrel || rel <= 0 {
			t.Errorf("%q: cosine %.3f with %q, %.3f with %q", c.query, rel, c.related, unrel, c.unrelated)
		}
	}
}

func TestVectorShape(t *testing.T) {
	s := space(t)
	long := "Search the catalog of flights, hotels, cars and trips by city, date, price, airline, " +
		"rating and amenities; book, cancel or change a reservation and pay with a stored card"
	v := vector(t, s, long)
	if n := len(v.Indices()); n == 0 || n > meaning.MaxTerms {
		t.Fatalf("%d terms, want 1..%d", n, meaning.MaxTerms)
	}
	if v.Dimensions() != meaning.Dims {
		t.Fatalf("dimensions %d, want %d", v.Dimensions(), meaning.Dims)
	}
	if norm := math.Sqrt(cosine(v, v)); math.Abs(norm-1) > 1e-5 {
		t.Fatalf("norm %v, want 1", norm)
	}
	if again := vector(t, s, long); again.String() != v.String() {
		t.Fatal("the same text gave another vector")
	}
	if _, ok := s.Vector("zqxv 12345 的"); ok {
		t.Fatal("a text without an English word has a meaning")
	}
}
