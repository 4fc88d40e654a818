package main

import (
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/setup"
)

// newSearch builds the search service from the settings, embedding queries with the same
// embedder that built the stored vectors, with the configured query planner and reranker.
// With a read pool (may be nil) searches run on that replica.
func newSearch(env *cliEnv, pool, read *pgxpool.Pool, embedder embed.Embedder) (*search.Service, error) {
	st, err := searchSettings(env)
	if err != nil {
		return nil, err
	}
	return newSearchWith(env, st, pool, read, embedder), nil
}

// newSearchWith is newSearch with settings already made (serve gives the same ones to the
// workers, whose tunes score rankings as the searches fuse them).
func newSearchWith(env *cliEnv, st search.Settings, pool, read *pgxpool.Pool, embedder embed.Embedder) *search.Service {
	opts := []search.Option{search.WithMetrics(env.metrics)}
	if read != nil {
		opts = append(opts, search.WithReadPool(read))
	}
	return search.New(pool, embedder, st, env.log, opts...)
}

// searchSettings are the search settings of the configuration, its provider calls recorded
// in the process's metrics and traces.
func searchSettings(env *cliEnv) (search.Settings, error) {
	return setup.SearchSettings(env.cfg, env.providerObserver())
}
