package lexical_test

import (
	"context"
	"math"
	"testing"

	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
)

// TestImpactUsesDefaultBM25: a posting's impact (toolgate_bm25_impact, sql/functions) is
// the BM25 term weight with the search's default k1 and b (search.DefaultSettings, their
// one home): SQL cannot read the Go constants, so this keeps the two equal.
func TestImpactUsesDefaultBM25(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	d := search.DefaultSettings()
	for _, c := range []struct{ tf, docLen, avgdl float64 }{{1, 10, 10}, {3, 5, 20}, {2, 40, 8}, {7, 1, 1}} {
		var got float64
		if err := pool.QueryRow(context.Background(), `SELECT toolgate_bm25_impact($1, $2, $3)::float8`,
			float32(c.tf), float32(c.docLen), c.avgdl).Scan(&got); err != nil {
			t.Fatal(err)
		}
		want := c.tf * (d.K1 + 1) / (c.tf + d.K1*(1-d.B+d.B*c.docLen/c.avgdl))
		if math.Abs(got-want) > 1e-5*want {
			t.Errorf("impact(tf %v, len %v, avgdl %v) = %v, want %v (k1 %v, b %v)", c.tf, c.docLen, c.avgdl, got, want, d.K1, d.B)
		}
	}
}
