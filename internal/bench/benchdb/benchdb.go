// Package benchdb makes and opens the benchmarks' databases: a fresh database per run, the
// kept searchbench catalogs toolgate_bench_<n> (built once, reused with --reuse), and the
// reads of the benchmark databases no production code makes.
package benchdb

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/search/searchbench"
	"github.com/toolgate/toolgate/internal/setup"
)

// Server is the PostgreSQL server the benchmarks make their databases on.
type Server struct {
	// URL is the DATABASE_URL setting: a database of the server, whose name the
	// benchmarks' databases replace.
	URL string
	// MaxConns sizes the measured pools (TOOLGATE_DB_MAX_CONNS).
	MaxConns int
	Log      *slog.Logger
}

// urlOf is the URL of database name on the server.
func (s Server) urlOf(name string) (string, error) {
	u, err := url.Parse(s.URL)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

// Connect opens a measured pool on dbURL, sized by MaxConns.
func (s Server) Connect(ctx context.Context, dbURL string) (*pgxpool.Pool, error) {
	return postgres.Connect(ctx, dbURL, postgres.WithMaxConns(s.MaxConns))
}

// Fresh (re)creates database name on the server and returns its URL and a function dropping
// it.
func (s Server) Fresh(ctx context.Context, name string) (string, func(), error) {
	dbURL, err := s.urlOf(name)
	if err != nil {
		return "", nil, err
	}
	admin, err := pgx.Connect(ctx, s.URL)
	if err != nil {
		return "", nil, err
	}
	defer admin.Close(context.WithoutCancel(ctx))
	// Raw DDL: database names cannot be bind parameters; callers pass a name they built.
	for _, stmt := range []string{`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`, `CREATE DATABASE ` + name} {
		if _, err := admin.Exec(ctx, stmt); err != nil {
			return "", nil, fmt.Errorf("%s: %w", stmt, err)
		}
	}
	drop := func() {
		c, err := pgx.Connect(context.WithoutCancel(ctx), s.URL)
		if err != nil {
			return
		}
		defer c.Close(context.WithoutCancel(ctx))
		_, _ = c.Exec(context.WithoutCancel(ctx), `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
	}
	return dbURL, drop, nil
}

// Migrated migrates the database of dbURL with a pool of its own and opens the measured
// pool: connections made before the migration may not know its types.
func (s Server) Migrated(ctx context.Context, dbURL string) (*pgxpool.Pool, error) {
	mp, err := postgres.Connect(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	err = postgres.MigrateUp(ctx, mp)
	mp.Close()
	if err != nil {
		return nil, err
	}
	return s.Connect(ctx, dbURL)
}

// Catalog opens toolgate_bench_<n> holding the searchbench catalog of n tools: reused as it
// is when reuse is set and it holds n tools, else dropped, created, migrated and built
// (minutes for 50,000 tools on 2 cores). The database is kept after the run.
func (s Server) Catalog(ctx context.Context, n int, reuse bool) (*pgxpool.Pool, error) {
	name := "toolgate_bench_" + strconv.Itoa(n)
	dbURL, err := s.urlOf(name)
	if err != nil {
		return nil, err
	}
	if reuse {
		if pool, err := s.Connect(ctx, dbURL); err == nil {
			var have int
			err := pool.QueryRow(ctx, `SELECT count(*) FROM tools`).Scan(&have)
			pool.Close()
			if err == nil && have == n {
				s.Log.Info("bench: reusing catalog", "database", name, "tools", n)
				return s.reuse(ctx, dbURL)
			}
		}
	}
	// kept after the run (--reuse): its drop function is not called
	if _, _, err := s.Fresh(ctx, name); err != nil {
		return nil, err
	}
	if err := s.build(ctx, name, dbURL, n); err != nil {
		return nil, fmt.Errorf("build %s: %w", name, err)
	}
	pool, err := s.Connect(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	if err := Partitions(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

// build migrates database name and builds the catalog of n tools in it.
func (s Server) build(ctx context.Context, name, dbURL string, n int) error {
	t0 := time.Now()
	// Separate pools: connections made before the migration do not know the vector type,
	// and those made before the build not its dimension.
	pool, err := postgres.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := postgres.MigrateUp(ctx, pool); err != nil {
		return err
	}
	built, err := postgres.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer built.Close()
	return searchbench.Build(ctx, built, n, func(f string, args ...any) {
		s.Log.Info("bench: build "+name, "step", fmt.Sprintf(f, args...), "elapsed", time.Since(t0).Round(time.Second).String())
	})
}

// reuse brings a kept catalog built by an earlier toolgate up to this one's schema and
// index, as `toolgate migrate up` does (searches of the current code would fail on the old
// schema, and time a half-built index after a migration that queues every tool), and opens
// it.
func (s Server) reuse(ctx context.Context, dbURL string) (*pgxpool.Pool, error) {
	mp, err := postgres.Connect(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	err = setup.MigrateUp(ctx, mp, s.Log)
	mp.Close()
	if err != nil {
		return nil, err
	}
	// a new pool: connections made before the migration may not know its types
	pool, err := s.Connect(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	return pool, Partitions(ctx, pool)
}

// Partitions makes the retrieval log's partitions of the next days, which the served
// searches write into.
func Partitions(ctx context.Context, pool *pgxpool.Pool) error {
	_, err := db.New(pool).EnsureSearchLogPartitions(ctx, 2)
	return err
}

// StatementP50 is the p50 of the search statement's own time (the retrieval log's db_ms),
// in milliseconds, of queries under 40 words and of longer ones.
type StatementP50 struct{ Short, Long float64 }

// StatementTimes is the StatementP50 of the searches logged since.
func StatementTimes(ctx context.Context, pool *pgxpool.Pool, since time.Time) (StatementP50, error) {
	var st StatementP50
	// Raw SQL: a one-off report over the retrieval log of the benchmark database.
	err := pool.QueryRow(ctx, `
		SELECT coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY (timings->>'db_ms')::float8)
		                FILTER (WHERE cardinality(regexp_split_to_array(query, '\s+')) < 40), 0),
		       coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY (timings->>'db_ms')::float8)
		                FILTER (WHERE cardinality(regexp_split_to_array(query, '\s+')) >= 40), 0)
		FROM search_log WHERE created_at >= $1`, since).Scan(&st.Short, &st.Long)
	return st, err
}

// KNN runs the bare pgvector KNN query on the active set per operation, cycling through the
// searchbench queries: the floor under hybrid search.
func KNN(pool *pgxpool.Pool) bench.Op {
	queries := searchbench.Queries(rand.New(rand.NewPCG(7, 7)))
	vecs := make([]pgvector.Vector, len(queries))
	for i, q := range queries {
		vecs[i] = pgvector.NewVector(searchbench.Vector(q))
	}
	var mu sync.Mutex
	next := 0
	return func(ctx context.Context, _ int) error {
		mu.Lock()
		v := vecs[next%len(vecs)]
		next++
		mu.Unlock()
		rows, err := pool.Query(ctx, searchbench.KNNFloor, v)
		if err != nil {
			return err
		}
		rows.Close()
		return rows.Err()
	}
}
