package main

import (
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/llm"
	"github.com/toolgate/toolgate/internal/plan"
	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/rerank"
	"github.com/toolgate/toolgate/internal/search"
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

// searchSettings are the search settings of the configuration: the tuning, the query
// planner and the reranker.
func searchSettings(env *cliEnv) (search.Settings, error) {
	c := env.cfg
	obs := env.providerObserver()
	heuristic, planner, err := newPlanner(c, obs)
	if err != nil {
		return search.Settings{}, err
	}
	reranker, err := rerank.New(rerank.Options{Kind: c.Reranker, URL: c.RerankURL, Key: c.RerankKey,
		Model: c.RerankModel, Style: rerank.Style(c.RerankStyle), Chat: newChat(c, obs), Observer: obs})
	if err != nil {
		return search.Settings{}, err
	}
	return search.Settings{
		Fusion: search.Fusion(c.SearchFusion), KRRF: c.SearchKRRF,
		WeightLexical: c.SearchWeightLexical, WeightVector: c.SearchWeightVector, VectorConfidence: c.SearchVectorConfidence,
		WeightMeaning: c.SearchWeightMeaning,
		EfSearch:      c.SearchEfSearch, Candidates: c.SearchCandidates, Postings: c.SearchPostings, LexicalTerms: c.SearchTerms,
		EmbedTimeout: c.SearchEmbedTimeout, StatementTimeout: c.SearchStmtTimeout, QueryIDF: c.SearchQueryIDF,
		Planner: planner, DefaultPlan: plan.Mode(c.SearchPlan), DefaultPlanner: heuristic, Reranker: reranker, RerankTopN: c.RerankTopN, RerankTimeout: c.RerankTimeout,
	}, nil
}

// newPlanner builds the heuristic planner and the planner of TOOLGATE_PLANNER (the same one
// unless it is llm). The heuristic planner's vocabulary is the TOOLGATE_PLAN_VOCABULARY
// file; without one it splits tasks but never by entity.
func newPlanner(c config.Config, obs *provider.Observer) (*plan.Heuristic, plan.Planner, error) {
	var aliases map[string]string
	if c.PlanVocabulary != "" {
		var err error
		if aliases, err = plan.LoadVocabulary(c.PlanVocabulary); err != nil {
			return nil, nil, err
		}
	}
	h := plan.NewHeuristic(aliases)
	if c.Planner == plan.NameLLM {
		return h, plan.NewLLM(newChat(c, obs), h, c.PlanTimeout), nil
	}
	return h, h, nil
}

// newChat is the chat client of TOOLGATE_LLM_*, used by the LLM planner and reranker;
// obs (may be nil) records its calls.
func newChat(c config.Config, obs *provider.Observer) *llm.Client {
	return llm.New(llm.Config{
		Provider: provider.Config{BaseURL: c.LLMURL, Key: c.LLMKey, Timeout: c.LLMTimeout,
			Concurrency: c.LLMConcurrency, Retries: c.ProviderRetries, Observer: obs},
		Model: c.LLMModel,
	})
}
