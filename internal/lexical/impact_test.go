package lexical_test

import (
	"context"
	"math"
	"testing"

	"github.com/toolgate/toolgate/internal/pgtest"
)

// TestBM25Functions: the BM25 formulas' one home (sql/functions/bm25.sql) computes the
// textbook Okapi BM25 with k1 1.2 and b 0.75, and a posting's impact is the term weight.
func TestBM25Functions(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	const k1, b = 1.2, 0.75
	for _, c := range []struct{ tf, docLen, avgdl, n, df float64 }{{1, 10, 10, 100, 3}, {3, 5, 20, 40, 40}, {2, 40, 8, 7, 1}, {7, 1, 1, 1, 0}} {
		var term, impact, idf float64
		if err := pool.QueryRow(context.Background(), `SELECT toolgate_bm25_term($1, $2, $3), toolgate_bm25_impact($1::real, $2::real, $3)::float8,
			toolgate_bm25_idf($4, $5)`, c.tf, c.docLen, c.avgdl, c.n, c.df).Scan(&term, &impact, &idf); err != nil {
			t.Fatal(err)
		}
		wantTerm := c.tf * (k1 + 1) / (c.tf + k1*(1-b+b*c.docLen/c.avgdl))
		wantIDF := math.Log(1 + (c.n-c.df+0.5)/(c.df+0.5))
		if math.Abs(term-wantTerm) > 1e-12 || math.Abs(impact-wantTerm) > 1e-5*wantTerm || math.Abs(idf-wantIDF) > 1e-12 {
			t.Errorf("%+v: term %v impact %v idf %v, want %v %v", c, term, impact, idf, wantTerm, wantIDF)
		}
	}
}
