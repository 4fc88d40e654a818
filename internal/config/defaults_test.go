package config

import (
	"testing"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/gateway"
	"github.com/toolgate/toolgate/internal/memory"
	"github.com/toolgate/toolgate/internal/observed"
	"github.com/toolgate/toolgate/internal/search"
)

// config's copies of other packages' defaults and bounds (defaults.go) are theirs: the
// settings that are not set are what each owner would choose.
func TestDefaultsAreTheirOwners(t *testing.T) {
	c, err := Load(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	sd := search.DefaultSettings()
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"search fusion", c.SearchFusion, string(sd.Fusion)},
		{"search k_rrf", c.SearchKRRF, sd.KRRF},
		{"search lexical weight", c.SearchWeightLexical, sd.WeightLexical},
		{"search vector weight", c.SearchWeightVector, sd.WeightVector},
		{"search ef_search", c.SearchEfSearch, sd.EfSearch},
		{"search candidates", c.SearchCandidates, sd.Candidates},
		{"search postings", c.SearchPostings, sd.Postings},
		{"search terms", c.SearchTerms, sd.LexicalTerms},
		{"search embed timeout", c.SearchEmbedTimeout, sd.EmbedTimeout},
		{"search statement timeout", c.SearchStmtTimeout, sd.StatementTimeout},
		{"search query IDF", c.SearchQueryIDF, sd.QueryIDF},
		{"search plan", c.SearchPlan, string(sd.DefaultPlan)},
		{"memory weight", c.MemoryWeight, sd.WeightMemory},
		{"memory neighbors", c.MemoryNeighbors, sd.MemoryNeighbors},
		{"memory min similarity", c.MemoryMinSimilarity, sd.MemoryMinSimilarity},
		{"demotion weight", c.DemotionWeight, sd.WeightDemotion},
		{"memory per tool", c.MemoryPerTool, memory.DefaultMaxPerTool},
		{"max memory per tool", maxMemoryPerTool, memory.MaxMaxPerTool},
		{"memory lists from", c.MemoryListsFrom, memory.DefaultListFrom},
		{"rerank top n", c.RerankTopN, sd.RerankTopN},
		{"rerank timeout", c.RerankTimeout, sd.RerankTimeout},
		// the defaults with the built-in local embedder, the default one
		{"vector confidence", c.SearchVectorConfidence, search.DefaultVectorConfidence},
		{"meaning weight", c.SearchWeightMeaning, search.DefaultWeightMeaning},
		{"observed min keys", c.ObservedMinKeys, observed.DefaultMinKeys},
		{"MCP connect timeout", c.MCPConnectTimeout, gateway.DefaultConnectTimeout},
		{"MCP stream write timeout", c.MCPStreamWriteTimeout, gateway.DefaultStreamWriteTimeout},
		{"MCP stream keep-alive", c.MCPStreamKeepAlive, gateway.DefaultStreamKeepAlive},
		{"MCP sessions per key", c.MCPSessionsPerKey, gateway.DefaultSessionsPerKey},
		{"max catalog bytes", c.MaxCatalogBytes, catalog.MaxCatalogBytes},
		// the bounds
		{"max questions", maxQuestions, enrich.MaxQuestions},
		{"max observed per tool", maxObservedPerTool, observed.MaxPerTool},
		{"max observed min keys", maxObservedMinKeys, observed.MaxMinKeys},
		{"max catalog bytes bound", maxCatalogBytes, catalog.MaxCatalogBytes},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: config's default %v, its owner's %v", tc.name, tc.got, tc.want)
		}
	}
}
