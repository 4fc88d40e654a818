package postgres_test

import (
	"context"
	"testing"
	"time"

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

func TestConnectTimeout(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDB(t)
	for _, tc := range []struct {
		url  string
		want time.Duration
	}{{url, postgres.DefaultConnectTimeout}, {url + "&connect_timeout=2", 2 * time.Second}} {
		pool, err := postgres.Connect(context.Background(), tc.url)
		if err != nil {
			t.Fatal(err)
		}
		got := pool.Config().ConnConfig.ConnectTimeout
		pool.Close()
		if got != tc.want {
			t.Errorf("%s: connect timeout %s, want %s", tc.url, got, tc.want)
		}
	}
}
