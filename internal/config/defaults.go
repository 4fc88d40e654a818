package config

import "time"

// The defaults and bounds of the settings that other packages give meaning to. config keeps
// its own copy so that it imports none of them; defaults_test.go checks each against its
// owner (search.DefaultSettings, enrich.MaxQuestions, ...), so a change there fails until
// it is made here too.

// searchDefaults are search.DefaultSettings' values of the settings of the search.
type searchDefaults struct {
	KRRF, WeightLexical, WeightVector             float64
	Fusion, DefaultPlan                           string
	EfSearch, Candidates, Postings                int
	LexicalTerms, RerankTopN                      int
	EmbedTimeout, StatementTimeout, RerankTimeout time.Duration
	QueryIDF                                      bool
	WeightMemory, MemoryMinSimilarity             float64
	WeightDemotion                                float64
	MemoryNeighbors                               int
}

// defaultSearch is search.DefaultSettings.
func defaultSearch() searchDefaults {
	return searchDefaults{Fusion: "minmax", KRRF: 60, WeightLexical: 1.5, WeightVector: 1, DefaultPlan: "decompose",
		EfSearch: 40, Candidates: 20, Postings: 30, LexicalTerms: 10, EmbedTimeout: 2 * time.Second,
		StatementTimeout: 5 * time.Second, RerankTopN: 30, RerankTimeout: 2 * time.Second,
		WeightMemory: 2, MemoryNeighbors: 10, MemoryMinSimilarity: 0.1, WeightDemotion: 0}
}

const (
	// defaultVectorConfidence and defaultWeightMeaning are search.DefaultVectorConfidence
	// and search.DefaultWeightMeaning, the defaults with the built-in local embedder.
	defaultVectorConfidence = 0.4
	defaultWeightMeaning    = 0.3

	// maxQuestions is enrich.MaxQuestions.
	maxQuestions = 50
	// maxObservedPerTool, defaultObservedMinKeys and maxObservedMinKeys are
	// observed.MaxPerTool, observed.DefaultMinKeys and observed.MaxMinKeys.
	maxObservedPerTool     = 100
	defaultObservedMinKeys = 3
	maxObservedMinKeys     = 1000

	// defaultMemoryPerTool and maxMemoryPerTool are memory.DefaultMaxPerTool and
	// memory.MaxMaxPerTool.
	defaultMemoryPerTool = 50
	maxMemoryPerTool     = 1000
	// defaultMemoryListsFrom is memory.DefaultListFrom; maxMemoryListsFrom bounds
	// TOOLGATE_MEMORY_LISTS_FROM.
	defaultMemoryListsFrom = 500
	maxMemoryListsFrom     = 100_000_000

	// The gateway's defaults: gateway.DefaultConnectTimeout, DefaultStreamWriteTimeout,
	// DefaultStreamKeepAlive and DefaultSessionsPerKey.
	defaultMCPConnectTimeout     = 20 * time.Second
	defaultMCPStreamWriteTimeout = 30 * time.Second
	defaultMCPStreamKeepAlive    = 15 * time.Second
	defaultMCPSessionsPerKey     = 256

	// maxCatalogBytes is catalog.MaxCatalogBytes, the catalog parser's own bound.
	maxCatalogBytes = 64 << 20
)
