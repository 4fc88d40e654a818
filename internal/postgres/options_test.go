package postgres_test

import (
	"context"
	"testing"

	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
)

func TestWithMaxConns(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDB(t)
	for _, tc := range []struct{ set, want int32 }{{3, 3}, {0, -1}} {
		pool, err := postgres.Connect(context.Background(), url, postgres.WithMaxConns(int(tc.set)))
		if err != nil {
			t.Fatal(err)
		}
		got := pool.Stat().MaxConns()
		pool.Close()
		if tc.want > 0 && got != tc.want || tc.want < 0 && got < 4 {
			t.Errorf("WithMaxConns(%d): pool max %d", tc.set, got)
		}
	}
}
