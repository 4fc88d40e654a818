// Package setup builds the services the settings describe: the embedder, the enricher, the
// chat client, the query planners and the search settings. The commands (toolgate and
// toolgate-bench) and the evaluation runner build them here, so that one setting means the
// same thing everywhere.
package setup

import (
	"context"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/lexicon"
	"github.com/toolgate/toolgate/internal/llm"
	"github.com/toolgate/toolgate/internal/plan"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/rerank"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/wordvec"
)

// Embedder builds the configured embedder: the built-in local one (with word vectors for
// local-words) or an OpenAI-compatible client whose calls obs (may be nil) records.
func Embedder(cfg config.Config, obs *provider.Observer) embed.Embedder {
	if cfg.Embedder == "openai" {
		return embed.NewOpenAI(embed.OpenAIConfig{
			Provider: provider.Config{BaseURL: cfg.EmbedURL, Key: cfg.EmbedKey, Timeout: cfg.LLMTimeout,
				Concurrency: cfg.EmbedConcurrency, Retries: cfg.ProviderRetries, Observer: obs},
			Model: cfg.EmbedModel, Dims: cfg.EmbedDims, SendDimensions: cfg.EmbedSendDims, MaxBatch: cfg.EmbedBatch,
		})
	}
	if cfg.Embedder == "local-words" {
		return embed.NewLocalWords(cfg.EmbedDims, wordvec.MustBuiltin())
	}
	return embed.NewLocal(cfg.EmbedDims)
}

// Enricher builds the configured enricher: the built-in heuristic one or an
// OpenAI-compatible chat model whose calls obs (may be nil) records.
func Enricher(cfg config.Config, obs *provider.Observer) enrich.Enricher {
	if cfg.Enricher == "openai" {
		return enrich.NewLLM(llm.New(llm.Config{
			Provider: provider.Config{BaseURL: cfg.LLMURL, Key: cfg.LLMKey, Timeout: cfg.LLMTimeout,
				Concurrency: cfg.LLMConcurrency, Retries: cfg.ProviderRetries, Observer: obs},
			Model: cfg.LLMModel,
		}), cfg.Judge)
	}
	return enrich.Heuristic{Lexicon: lexicon.Builtin}
}

// SearchSettings are the search settings of the configuration: the tuning, the query
// planner and the reranker; obs (may be nil) records the planner's and reranker's calls.
func SearchSettings(c config.Config, obs *provider.Observer) (search.Settings, error) {
	heuristic, planner, err := Planner(c, obs)
	if err != nil {
		return search.Settings{}, err
	}
	reranker, err := rerank.New(rerank.Options{Kind: c.Reranker, URL: c.RerankURL, Key: c.RerankKey,
		Model: c.RerankModel, Style: rerank.Style(c.RerankStyle), Chat: Chat(c, obs), Observer: obs})
	if err != nil {
		return search.Settings{}, err
	}
	return search.Settings{
		Fusion: search.Fusion(c.SearchFusion), KRRF: c.SearchKRRF,
		WeightLexical: c.SearchWeightLexical, WeightVector: c.SearchWeightVector, VectorConfidence: c.SearchVectorConfidence,
		WeightMeaning: c.SearchWeightMeaning,
		WeightMemory:  c.MemoryWeight, MemoryNeighbors: c.MemoryNeighbors, MemoryMinSimilarity: c.MemoryMinSimilarity,
		WeightDemotion: c.DemotionWeight,
		EfSearch:       c.SearchEfSearch, Candidates: c.SearchCandidates, Postings: c.SearchPostings, LexicalTerms: c.SearchTerms,
		EmbedTimeout: c.SearchEmbedTimeout, StatementTimeout: c.SearchStmtTimeout, QueryIDF: c.SearchQueryIDF,
		Planner: planner, DefaultPlan: plan.Mode(c.SearchPlan), DefaultPlanner: heuristic, Reranker: reranker, RerankTopN: c.RerankTopN, RerankTimeout: c.RerankTimeout,
	}, nil
}

// Planner builds the heuristic planner and the planner of TOOLGATE_PLANNER (the same one
// unless it is llm). The heuristic planner's vocabulary is the TOOLGATE_PLAN_VOCABULARY
// file; without one it splits tasks but never by entity.
func Planner(c config.Config, obs *provider.Observer) (*plan.Heuristic, plan.Planner, error) {
	var aliases map[string]string
	if c.PlanVocabulary != "" {
		var err error
		if aliases, err = plan.LoadVocabulary(c.PlanVocabulary); err != nil {
			return nil, nil, err
		}
	}
	h := plan.NewHeuristic(aliases)
	if c.Planner == plan.NameLLM {
		return h, plan.NewLLM(Chat(c, obs), h, c.PlanTimeout), nil
	}
	return h, h, nil
}

// Chat is the chat client of TOOLGATE_LLM_*, used by the LLM planner and reranker; obs
// (may be nil) records its calls.
func Chat(c config.Config, obs *provider.Observer) *llm.Client {
	return llm.New(llm.Config{
		Provider: provider.Config{BaseURL: c.LLMURL, Key: c.LLMKey, Timeout: c.LLMTimeout,
			Concurrency: c.LLMConcurrency, Retries: c.ProviderRetries, Observer: obs},
		Model: c.LLMModel,
	})
}

// MigrateUp applies the migrations, then indexes what they queued for the lexical index
// (migration 0011 queues the whole catalog), so that the catalog is searchable when the
// command returns or the server starts.
func MigrateUp(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) error {
	if err := postgres.MigrateUp(ctx, pool); err != nil {
		return err
	}
	st, err := lexical.Flush(ctx, pool)
	if err != nil {
		return err
	}
	if st.Indexed > 0 {
		log.Info("lexical index built", "tools", st.Indexed)
	}
	return nil
}
