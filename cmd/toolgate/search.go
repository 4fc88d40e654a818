package main

import (
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/search"
)

// newSearch builds the search service from the settings, embedding queries with the same
// embedder that built the stored vectors.
func newSearch(env *cliEnv, pool *pgxpool.Pool, embedder embed.Embedder) *search.Service {
	c := env.cfg
	return search.New(pool, embedder, search.Settings{
		K1: c.SearchK1, B: c.SearchB, KRRF: c.SearchKRRF,
		WeightLexical: c.SearchWeightLexical, WeightVector: c.SearchWeightVector,
		EfSearch: c.SearchEfSearch, Candidates: c.SearchCandidates, Postings: c.SearchPostings,
	}, env.log)
}
