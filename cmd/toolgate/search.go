package main

import (
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/search"
)

// newSearch builds the search service from the settings. No embedding provider is wired on
// this branch yet: searches run their lexical branch (mode vector answers 400 no_embedder).
func newSearch(env *cliEnv, pool *pgxpool.Pool) *search.Service {
	c := env.cfg
	return search.New(pool, nil, search.Settings{
		K1: c.SearchK1, B: c.SearchB, KRRF: c.SearchKRRF,
		WeightLexical: c.SearchWeightLexical, WeightVector: c.SearchWeightVector,
		EfSearch: c.SearchEfSearch, Candidates: c.SearchCandidates, Postings: c.SearchPostings,
	}, env.log)
}
