package postgres

import (
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Option tunes a pool opened by Connect.
type Option func(*pgxpool.Config)

// WithMaxConns caps the pool at n connections; n <= 0 keeps pgx's default (the larger
// of 4 and the number of CPUs) or the URL's pool_max_conns.
func WithMaxConns(n int) Option {
	return func(c *pgxpool.Config) {
		if n > 0 {
			c.MaxConns = int32(min(n, 1<<20))
		}
	}
}

// WithQueryTracer traces every query of the pool's connections (nil: none).
func WithQueryTracer(t pgx.QueryTracer) Option {
	return func(c *pgxpool.Config) {
		if t != nil {
			c.ConnConfig.Tracer = t
		}
	}
}
