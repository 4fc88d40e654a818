package main

import (
	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/lexicon"
	"github.com/toolgate/toolgate/internal/llm"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/provider"
)

// newEmbedder builds the configured embedder: the built-in local one or an
// OpenAI-compatible client whose calls obs (may be nil) records.
func newEmbedder(cfg config.Config, obs *provider.Observer) embed.Embedder {
	if cfg.Embedder == "openai" {
		return embed.NewOpenAI(embed.OpenAIConfig{
			Provider: provider.Config{BaseURL: cfg.EmbedURL, Key: cfg.EmbedKey, Timeout: cfg.LLMTimeout,
				Concurrency: cfg.EmbedConcurrency, Retries: cfg.ProviderRetries, Observer: obs},
			Model: cfg.EmbedModel, Dims: cfg.EmbedDims, SendDimensions: cfg.EmbedSendDims, MaxBatch: cfg.EmbedBatch,
		})
	}
	return embed.NewLocal(cfg.EmbedDims)
}

// newEnricher builds the configured enricher: the built-in heuristic one or an
// OpenAI-compatible chat model whose calls obs (may be nil) records.
func newEnricher(cfg config.Config, obs *provider.Observer) enrich.Enricher {
	if cfg.Enricher == "openai" {
		return enrich.NewLLM(llm.New(llm.Config{
			Provider: provider.Config{BaseURL: cfg.LLMURL, Key: cfg.LLMKey, Timeout: cfg.LLMTimeout,
				Concurrency: cfg.LLMConcurrency, Retries: cfg.ProviderRetries, Observer: obs},
			Model: cfg.LLMModel,
		}), cfg.Judge)
	}
	return enrich.Heuristic{Lexicon: lexicon.Builtin}
}

// stdioCommands is the allowlist of the programs mcp_stdio sources may run
// (TOOLGATE_STDIO_COMMANDS; none when unset).
func stdioCommands(cfg config.Config) mcpclient.CommandPolicy {
	return mcpclient.NewCommandPolicy(cfg.StdioCommands)
}

// listLimits bound one listing of an MCP server's tools (TOOLGATE_MAX_TOOLS_PER_SOURCE,
// TOOLGATE_MAX_LIST_BYTES) and each answer in it (TOOLGATE_MCP_MAX_RESPONSE_BYTES).
func listLimits(cfg config.Config) mcpclient.Limits {
	return mcpclient.Limits{MaxTools: cfg.MaxToolsPerSrc, MaxBytes: int64(cfg.MaxListBytes), MaxResponseBytes: int64(cfg.MCPMaxResponseBytes)}
}
