// Package config reads toolgate's settings from the environment. Every setting has a safe
// default; a setting that cannot be parsed fails with an *Error naming it.
package config

import (
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/httpguard"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/oauth"
	"github.com/toolgate/toolgate/internal/upstreamauth"
)

// DefaultDatabaseURL is the cluster made by scripts/pg-setup.sh.
const DefaultDatabaseURL = "postgres://postgres@127.0.0.1:55432/toolgate?sslmode=disable"

// Role selects what `toolgate serve` runs.
type Role string

const (
	RoleAll    Role = "all"    // HTTP API and River workers
	RoleAPI    Role = "api"    // HTTP API only; jobs are enqueued, never worked
	RoleWorker Role = "worker" // River workers only, plus /healthz and /readyz
)

// Config is every setting of toolgate.
// LogFormatAuto is the default TOOLGATE_LOG_FORMAT: text when the log goes to a terminal,
// JSON lines otherwise (a file, a pipe, a log collector).
const LogFormatAuto = "auto"

type Config struct {
	DatabaseURL     string            // DATABASE_URL
	DatabaseReadURL string            // DATABASE_READ_URL: a read replica for searches, empty for none
	ListenAddr      string            // LISTEN_ADDR
	Role            Role              // TOOLGATE_ROLE
	AutoMigrate     bool              // TOOLGATE_AUTO_MIGRATE
	ShutdownTimeout time.Duration     // TOOLGATE_SHUTDOWN_TIMEOUT
	Workers         int               // TOOLGATE_WORKERS
	LogLevel        slog.Level        // TOOLGATE_LOG_LEVEL
	LogFormat       string            // TOOLGATE_LOG_FORMAT: auto (text on a terminal, else json), json or text
	SearchLogKeep   time.Duration     // TOOLGATE_SEARCH_LOG_RETENTION
	SyncTimeout     time.Duration     // TOOLGATE_SYNC_TIMEOUT
	EnrichTimeout   time.Duration     // TOOLGATE_ENRICH_TIMEOUT: bound of one enrich_tool job
	ReweightTimeout time.Duration     // TOOLGATE_REWEIGHT_TIMEOUT: bound of one attempt of a re-weight (it resumes)
	JobTimeout      time.Duration     // TOOLGATE_JOB_TIMEOUT: bound of housekeeping jobs and of applying a listed sync
	RescueAfter     time.Duration     // TOOLGATE_RESCUE_AFTER: a job still running this long after its attempt began is retried; 0 derives it
	DBMaxConns      int               // TOOLGATE_DB_MAX_CONNS; per pool, 0 means pgx's default
	RiverPollOnly   bool              // TOOLGATE_RIVER_POLL_ONLY; no LISTEN/NOTIFY (pgbouncer)
	OTLPEndpoint    string            // TOOLGATE_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT; "" is off
	Open            bool              // TOOLGATE_OPEN: no API key needed, every caller is admin
	OpenRemote      bool              // TOOLGATE_OPEN_REMOTE: open mode may listen on addresses other than loopback
	CORSOrigins     httpguard.Origins // TOOLGATE_CORS_ORIGINS: web origins whose pages may call the search routes
	StdioCommands   [][]string        // TOOLGATE_STDIO_COMMANDS: what mcp_stdio sources may run (reader.commands); nil: none, but the demo's
	MaxToolsPerSrc  int               // TOOLGATE_MAX_TOOLS_PER_SOURCE: most tools one listing of an MCP server may hold
	MaxListBytes    int               // TOOLGATE_MAX_LIST_BYTES: most bytes read from an MCP server while listing its tools
	Planner         string            // TOOLGATE_PLANNER: heuristic or llm, for requests that ask for a plan
	PlanTimeout     time.Duration     // TOOLGATE_PLAN_TIMEOUT: bound of one LLM planning call
	PlanVocabulary  string            // TOOLGATE_PLAN_VOCABULARY: JSON file of entity surface → name for the heuristic planner
	Reranker        string            // TOOLGATE_RERANKER: none, http or llm
	RerankURL       string            // TOOLGATE_RERANK_URL: the full /rerank endpoint (http reranker)
	RerankKey       string            // TOOLGATE_RERANK_KEY: bearer token of the rerank API
	RerankModel     string            // TOOLGATE_RERANK_MODEL: model sent to cohere and jina
	RerankStyle     string            // TOOLGATE_RERANK_STYLE: cohere, jina or tei
	RerankTopN      int               // TOOLGATE_RERANK_TOP_N: fused candidates sent to the reranker
	RerankTimeout   time.Duration     // TOOLGATE_RERANK_TIMEOUT: bound of one rerank call

	// Enrichment and embeddings (see docs/enrichment.md).
	Embedder         string        // TOOLGATE_EMBEDDER: local, local-words or openai
	EmbedDims        int           // TOOLGATE_EMBED_DIMS: 384 for local (the hashed part of local-words); required for openai
	EmbedSendDims    bool          // TOOLGATE_EMBED_SEND_DIMS: send `dimensions` to the provider
	EmbedURL         string        // TOOLGATE_EMBED_URL
	EmbedKey         string        // TOOLGATE_EMBED_KEY
	EmbedModel       string        // TOOLGATE_EMBED_MODEL
	EmbedBatch       int           // TOOLGATE_EMBED_BATCH
	EmbedConcurrency int           // TOOLGATE_EMBED_CONCURRENCY
	Enricher         string        // TOOLGATE_ENRICHER: heuristic or openai
	LLMURL           string        // TOOLGATE_LLM_URL
	LLMKey           string        // TOOLGATE_LLM_KEY
	LLMModel         string        // TOOLGATE_LLM_MODEL
	LLMTimeout       time.Duration // TOOLGATE_LLM_TIMEOUT
	LLMConcurrency   int           // TOOLGATE_LLM_CONCURRENCY
	ProviderRetries  int           // TOOLGATE_PROVIDER_RETRIES
	Questions        int           // TOOLGATE_QUESTIONS
	Judge            bool          // TOOLGATE_JUDGE
	// ObservedQueries is TOOLGATE_OBSERVED_QUERIES: the most observed queries (queries of
	// labelled searches) kept per tool as components; 0, the default, collects none.
	ObservedQueries int
	// ObservedMinKeys is TOOLGATE_OBSERVED_MIN_KEYS: how many distinct API keys must have
	// searched a query before it is observed (searches without a key or with an admin key
	// are trusted on their own).
	ObservedMinKeys int

	MCPCallTool            bool          // TOOLGATE_MCP_CALL_TOOL: expose the call_tool meta-tool
	MCPUseTool             bool          // TOOLGATE_MCP_USE_TOOL: expose the use_tool meta-tool
	MCPBindLimit           int           // TOOLGATE_MCP_BIND_LIMIT: tools bound per MCP session
	MCPCallTimeout         time.Duration // TOOLGATE_MCP_CALL_TIMEOUT: a proxied call, end to end
	MCPConnectTimeout      time.Duration // TOOLGATE_MCP_CONNECT_TIMEOUT: connecting to a source within a call
	MCPUpstreamConcurrency int           // TOOLGATE_MCP_UPSTREAM_CONCURRENCY: calls in flight per source
	MCPMaxResponseBytes    int           // TOOLGATE_MCP_MAX_RESPONSE_BYTES: most bytes of one answer of an MCP server
	MCPSessionIdle         time.Duration // TOOLGATE_MCP_SESSION_IDLE: idle time before a session leaves memory
	MCPSessionKeep         time.Duration // TOOLGATE_MCP_SESSION_RETENTION: unused time before a session is deleted
	// MCPLabelWindow is TOOLGATE_MCP_LABEL_WINDOW: how long after a find_tools a call of a
	// tool it returned labels that search (docs/analytics.md#labels); negative ("off")
	// records no labels.
	MCPLabelWindow time.Duration
	// MCPStreamWriteTimeout is TOOLGATE_MCP_STREAM_WRITE_TIMEOUT: how long one write of an
	// /mcp response (an event, a keep-alive) may take before the stream is dropped.
	MCPStreamWriteTimeout time.Duration
	// MCPStreamKeepAlive is TOOLGATE_MCP_STREAM_KEEPALIVE: the interval of the keep-alive
	// comments of a standalone /mcp stream; negative ("off") sends none.
	MCPStreamKeepAlive time.Duration
	// MCPSessionsPerKey is TOOLGATE_MCP_SESSIONS_PER_KEY: the most sessions of one key an
	// instance holds in memory (more set the least recently used ones aside).
	MCPSessionsPerKey int
	// Search tuning (see docs/search.md).
	SearchFusion        string        // TOOLGATE_SEARCH_FUSION: rrf, minmax or dbsf
	SearchKRRF          float64       // TOOLGATE_SEARCH_RRF_K
	SearchWeightLexical float64       // TOOLGATE_SEARCH_WEIGHT_LEXICAL
	SearchWeightVector  float64       // TOOLGATE_SEARCH_WEIGHT_VECTOR
	SearchEfSearch      int           // TOOLGATE_SEARCH_EF_SEARCH
	SearchCandidates    int           // TOOLGATE_SEARCH_CANDIDATES
	SearchPostings      int           // TOOLGATE_SEARCH_POSTINGS
	SearchTerms         int           // TOOLGATE_SEARCH_TERMS
	SearchEmbedTimeout  time.Duration // TOOLGATE_SEARCH_EMBED_TIMEOUT
	SearchStmtTimeout   time.Duration // TOOLGATE_SEARCH_STATEMENT_TIMEOUT
	SearchQueryIDF      bool          // TOOLGATE_SEARCH_QUERY_IDF
	// SearchVectorConfidence is TOOLGATE_SEARCH_VECTOR_CONFIDENCE: search.DefaultVectorConfidence
	// with the local embedder, 0 (off) with a configured one.
	SearchVectorConfidence float64
	// SearchWeightMeaning is TOOLGATE_SEARCH_WEIGHT_MEANING: search.DefaultWeightMeaning with
	// the local embedder, 0 (off) with a configured one.
	SearchWeightMeaning float64
	// MemoryWeight is TOOLGATE_MEMORY_WEIGHT: the memory branch's fusion weight (0: off, and
	// no memory_sweep job), docs/learning.md.
	MemoryWeight float64
	// MemoryNeighbors is TOOLGATE_MEMORY_NEIGHBORS: the nearest memories that vote per text.
	MemoryNeighbors int
	// MemoryMinSimilarity is TOOLGATE_MEMORY_MIN_SIMILARITY: the least cosine similarity of
	// a memory that votes.
	MemoryMinSimilarity float64
	// MemoryPerTool is TOOLGATE_MEMORY_PER_TOOL: the most memories kept per tool and tenant.
	MemoryPerTool int
	// MemoryListsFrom is TOOLGATE_MEMORY_LISTS_FROM: the number of memories from which a
	// tenant's are split into lists that a search reads a quarter of (0: never).
	MemoryListsFrom int
	// DemotionWeight is TOOLGATE_DEMOTION_WEIGHT: what negative evidence costs a tool for a
	// tenant (0: nothing), docs/learning.md#negative-evidence.
	DemotionWeight float64
	SearchPlan     string // TOOLGATE_SEARCH_PLAN: the heuristic plan of a request that asks for none

	// Limits of the HTTP server and of request bodies (docs/auth.md#limits; their defaults
	// are those of api.ServerLimits and api.Limits).
	HTTPReadHeaderTimeout time.Duration // TOOLGATE_HTTP_READ_HEADER_TIMEOUT: request line and headers
	HTTPReadTimeout       time.Duration // TOOLGATE_HTTP_READ_TIMEOUT: the whole request, body included
	HTTPIdleTimeout       time.Duration // TOOLGATE_HTTP_IDLE_TIMEOUT: a kept-alive connection between requests
	HTTPMaxHeaderBytes    int           // TOOLGATE_HTTP_MAX_HEADER_BYTES
	MaxBodyBytes          int           // TOOLGATE_MAX_BODY_BYTES: a JSON request body
	MaxCatalogBytes       int           // TOOLGATE_MAX_CATALOG_BYTES: a catalog pushed over HTTP
	MaxCatalogTools       int           // TOOLGATE_MAX_CATALOG_TOOLS: the tools of a catalog pushed over HTTP

	// A key's share of the database (docs/auth.md#fair-share).
	KeySearchUnits int // TOOLGATE_KEY_SEARCH_UNITS: search units one key may have in flight
	DBControlConns int // TOOLGATE_DB_CONTROL_CONNS: the pool of key lookups and /readyz

	// OAuth is TOOLGATE_OAUTH_*: access tokens accepted beside API keys (oauth.go).
	OAuth oauth.Settings
	// UpstreamAuth is TOOLGATE_SECRET_KEYS and TOOLGATE_PUBLIC_URL: OAuth to mcp_http
	// sources (upstreamauth.go).
	UpstreamAuth upstreamauth.Settings
}

// Error is a setting that cannot be used.
type Error struct {
	Setting string
	Value   string
	Reason  string
}

func (e *Error) Error() string {
	return fmt.Sprintf("invalid %s=%q: %s", e.Setting, e.Value, e.Reason)
}

// Load reads the settings through getenv (os.Getenv in production).
func Load(getenv func(string) string) (Config, error) {
	r := reader{getenv: getenv}
	// The search's defaults are search.DefaultSettings (defaults.go).
	sd := defaultSearch()
	c := Config{
		DatabaseURL:     r.str("DATABASE_URL", DefaultDatabaseURL),
		DatabaseReadURL: r.str("DATABASE_READ_URL", ""),
		ListenAddr:      r.str("LISTEN_ADDR", ":8080"),
		Role:            Role(r.str("TOOLGATE_ROLE", string(RoleAll))),
		AutoMigrate:     r.boolean("TOOLGATE_AUTO_MIGRATE", true),
		ShutdownTimeout: r.duration("TOOLGATE_SHUTDOWN_TIMEOUT", 30*time.Second),
		Workers:         r.integer("TOOLGATE_WORKERS", 10, 1, 1000),
		LogFormat:       r.str("TOOLGATE_LOG_FORMAT", LogFormatAuto),
		SearchLogKeep:   r.duration("TOOLGATE_SEARCH_LOG_RETENTION", 90*24*time.Hour),
		SyncTimeout:     r.duration("TOOLGATE_SYNC_TIMEOUT", time.Minute),
		EnrichTimeout:   r.duration("TOOLGATE_ENRICH_TIMEOUT", 5*time.Minute),
		ReweightTimeout: r.duration("TOOLGATE_REWEIGHT_TIMEOUT", 10*time.Minute),
		JobTimeout:      r.duration("TOOLGATE_JOB_TIMEOUT", time.Minute),
		RescueAfter:     r.duration("TOOLGATE_RESCUE_AFTER", 0),
		DBMaxConns:      r.integer("TOOLGATE_DB_MAX_CONNS", 0, 0, 10000),
		RiverPollOnly:   r.boolean("TOOLGATE_RIVER_POLL_ONLY", false),
		OTLPEndpoint:    r.str("TOOLGATE_OTLP_ENDPOINT", r.str("OTEL_EXPORTER_OTLP_ENDPOINT", "")),
		Open:            r.boolean("TOOLGATE_OPEN", false),
		OpenRemote:      r.boolean("TOOLGATE_OPEN_REMOTE", false),
		StdioCommands:   r.commands("TOOLGATE_STDIO_COMMANDS"),
		MaxToolsPerSrc:  r.integer("TOOLGATE_MAX_TOOLS_PER_SOURCE", 10_000, 1, 1_000_000),
		MaxListBytes:    r.integer("TOOLGATE_MAX_LIST_BYTES", 64<<20, 64<<10, 4<<30),
		Planner:         r.str("TOOLGATE_PLANNER", "heuristic"),
		PlanTimeout:     r.duration("TOOLGATE_PLAN_TIMEOUT", 3*time.Second),
		PlanVocabulary:  r.str("TOOLGATE_PLAN_VOCABULARY", ""),
		Reranker:        r.str("TOOLGATE_RERANKER", "none"),
		RerankURL:       r.str("TOOLGATE_RERANK_URL", ""),
		RerankKey:       r.str("TOOLGATE_RERANK_KEY", ""),
		RerankModel:     r.str("TOOLGATE_RERANK_MODEL", ""),
		RerankStyle:     r.str("TOOLGATE_RERANK_STYLE", "cohere"),
		RerankTopN:      r.integer("TOOLGATE_RERANK_TOP_N", sd.RerankTopN, 1, 1000),
		RerankTimeout:   r.duration("TOOLGATE_RERANK_TIMEOUT", sd.RerankTimeout),
	}
	r.readProviders(&c)
	r.readMCP(&c)
	r.readSearch(&c, sd)
	r.readLimits(&c)
	r.readOAuth(&c)
	r.readUpstreamAuth(&c)
	c.LogLevel = r.level("TOOLGATE_LOG_LEVEL", slog.LevelInfo)
	confidence, meaningWeight := 0.0, 0.0
	if c.Embedder == "local" || c.Embedder == "local-words" {
		confidence, meaningWeight = defaultVectorConfidence, defaultWeightMeaning
	}
	c.SearchVectorConfidence = r.float("TOOLGATE_SEARCH_VECTOR_CONFIDENCE", confidence, 0, 1)
	c.SearchWeightMeaning = r.float("TOOLGATE_SEARCH_WEIGHT_MEANING", meaningWeight, 0, 100)
	for _, name := range []string{"TOOLGATE_SEARCH_BM25_K1", "TOOLGATE_SEARCH_BM25_B"} {
		if v := r.getenv(name); v != "" {
			r.fail(name, v, "no longer a setting: BM25's k1 and b are fixed at 1.2 and 0.75, the values the lexical index's stored impacts are computed with")
		}
	}
	if r.err != nil {
		return c, r.err
	}
	return c, c.Validate()
}

// readProviders reads the embedding and LLM providers' settings and the enrichment's.
func (r *reader) readProviders(c *Config) {
	c.Embedder = r.str("TOOLGATE_EMBEDDER", "local-words")
	c.EmbedDims = r.integer("TOOLGATE_EMBED_DIMS", 0, 0, 16000)
	c.EmbedSendDims = r.boolean("TOOLGATE_EMBED_SEND_DIMS", false)
	c.EmbedURL = r.str("TOOLGATE_EMBED_URL", "https://api.openai.com/v1")
	c.EmbedKey = r.str("TOOLGATE_EMBED_KEY", "")
	c.EmbedModel = r.str("TOOLGATE_EMBED_MODEL", "text-embedding-3-small")
	c.EmbedBatch = r.integer("TOOLGATE_EMBED_BATCH", 256, 1, 2048)
	c.EmbedConcurrency = r.integer("TOOLGATE_EMBED_CONCURRENCY", 4, 1, 256)
	c.Enricher = r.str("TOOLGATE_ENRICHER", "heuristic")
	c.LLMURL = r.str("TOOLGATE_LLM_URL", "https://api.openai.com/v1")
	c.LLMKey = r.str("TOOLGATE_LLM_KEY", "")
	c.LLMModel = r.str("TOOLGATE_LLM_MODEL", "gpt-4o-mini")
	c.LLMTimeout = r.duration("TOOLGATE_LLM_TIMEOUT", 60*time.Second)
	c.LLMConcurrency = r.integer("TOOLGATE_LLM_CONCURRENCY", 4, 1, 256)
	c.ProviderRetries = r.integer("TOOLGATE_PROVIDER_RETRIES", 5, 0, 20)
	c.Questions = r.integer("TOOLGATE_QUESTIONS", 10, 0, maxQuestions)
	c.Judge = r.boolean("TOOLGATE_JUDGE", false)
	c.ObservedQueries = r.integer("TOOLGATE_OBSERVED_QUERIES", 0, 0, maxObservedPerTool)
	c.ObservedMinKeys = r.integer("TOOLGATE_OBSERVED_MIN_KEYS", defaultObservedMinKeys, 1, maxObservedMinKeys)
}

// readMCP reads the MCP gateway's settings.
func (r *reader) readMCP(c *Config) {
	c.MCPCallTool = r.boolean("TOOLGATE_MCP_CALL_TOOL", true)
	c.MCPUseTool = r.boolean("TOOLGATE_MCP_USE_TOOL", false)
	c.MCPBindLimit = r.integer("TOOLGATE_MCP_BIND_LIMIT", 32, 1, 1000)
	c.MCPCallTimeout = r.duration("TOOLGATE_MCP_CALL_TIMEOUT", 30*time.Second)
	c.MCPConnectTimeout = r.duration("TOOLGATE_MCP_CONNECT_TIMEOUT", defaultMCPConnectTimeout)
	c.MCPUpstreamConcurrency = r.integer("TOOLGATE_MCP_UPSTREAM_CONCURRENCY", 8, 1, 1000)
	c.MCPMaxResponseBytes = r.integer("TOOLGATE_MCP_MAX_RESPONSE_BYTES", int(mcpclient.DefaultLimits.MaxResponseBytes), 64<<10, 1<<30)
	c.MCPSessionIdle = r.duration("TOOLGATE_MCP_SESSION_IDLE", 30*time.Minute)
	c.MCPSessionKeep = r.duration("TOOLGATE_MCP_SESSION_RETENTION", 7*24*time.Hour)
	c.MCPLabelWindow = r.durationOrOff("TOOLGATE_MCP_LABEL_WINDOW", 15*time.Minute)
	c.MCPStreamWriteTimeout = r.duration("TOOLGATE_MCP_STREAM_WRITE_TIMEOUT", defaultMCPStreamWriteTimeout)
	c.MCPStreamKeepAlive = r.durationOrOff("TOOLGATE_MCP_STREAM_KEEPALIVE", defaultMCPStreamKeepAlive)
	c.MCPSessionsPerKey = r.integer("TOOLGATE_MCP_SESSIONS_PER_KEY", defaultMCPSessionsPerKey, 1, 100000)
}

// readSearch reads the search's settings, whose defaults are sd.
func (r *reader) readSearch(c *Config, sd searchDefaults) {
	c.SearchFusion = r.str("TOOLGATE_SEARCH_FUSION", string(sd.Fusion))
	c.SearchKRRF = r.float("TOOLGATE_SEARCH_RRF_K", sd.KRRF, 0, 10000)
	c.SearchWeightLexical = r.float("TOOLGATE_SEARCH_WEIGHT_LEXICAL", sd.WeightLexical, 0, 100)
	c.SearchWeightVector = r.float("TOOLGATE_SEARCH_WEIGHT_VECTOR", sd.WeightVector, 0, 100)
	c.SearchEfSearch = r.integer("TOOLGATE_SEARCH_EF_SEARCH", sd.EfSearch, 10, 1000)
	c.SearchCandidates = r.integer("TOOLGATE_SEARCH_CANDIDATES", sd.Candidates, 1, 1000)
	c.SearchPostings = r.integer("TOOLGATE_SEARCH_POSTINGS", sd.Postings, 1, 100000)
	c.SearchTerms = r.integer("TOOLGATE_SEARCH_TERMS", sd.LexicalTerms, 1, 1000)
	c.SearchEmbedTimeout = r.duration("TOOLGATE_SEARCH_EMBED_TIMEOUT", sd.EmbedTimeout)
	c.SearchStmtTimeout = r.durationOrOff("TOOLGATE_SEARCH_STATEMENT_TIMEOUT", sd.StatementTimeout)
	c.SearchQueryIDF = r.boolean("TOOLGATE_SEARCH_QUERY_IDF", sd.QueryIDF)
	c.SearchPlan = r.str("TOOLGATE_SEARCH_PLAN", string(sd.DefaultPlan))
	c.MemoryWeight = r.float("TOOLGATE_MEMORY_WEIGHT", sd.WeightMemory, 0, 100)
	c.MemoryNeighbors = r.integer("TOOLGATE_MEMORY_NEIGHBORS", sd.MemoryNeighbors, 1, 1000)
	c.MemoryMinSimilarity = r.float("TOOLGATE_MEMORY_MIN_SIMILARITY", sd.MemoryMinSimilarity, -1, 1)
	c.MemoryPerTool = r.integer("TOOLGATE_MEMORY_PER_TOOL", defaultMemoryPerTool, 1, maxMemoryPerTool)
	c.MemoryListsFrom = r.integer("TOOLGATE_MEMORY_LISTS_FROM", defaultMemoryListsFrom, 0, maxMemoryListsFrom)
	c.DemotionWeight = r.float("TOOLGATE_DEMOTION_WEIGHT", sd.WeightDemotion, 0, 100)
}

// readLimits reads the HTTP server's timeouts and the sizes of what a request may send.
func (r *reader) readLimits(c *Config) {
	c.HTTPReadHeaderTimeout = r.duration("TOOLGATE_HTTP_READ_HEADER_TIMEOUT", 10*time.Second)
	c.HTTPReadTimeout = r.duration("TOOLGATE_HTTP_READ_TIMEOUT", 60*time.Second)
	c.HTTPIdleTimeout = r.duration("TOOLGATE_HTTP_IDLE_TIMEOUT", 120*time.Second)
	c.HTTPMaxHeaderBytes = r.integer("TOOLGATE_HTTP_MAX_HEADER_BYTES", 64<<10, 4<<10, 16<<20)
	c.MaxBodyBytes = r.integer("TOOLGATE_MAX_BODY_BYTES", 64<<10, 1<<10, 64<<20)
	// at most the catalog parser's own bound
	c.MaxCatalogBytes = r.integer("TOOLGATE_MAX_CATALOG_BYTES", maxCatalogBytes, 1<<10, maxCatalogBytes)
	c.MaxCatalogTools = r.integer("TOOLGATE_MAX_CATALOG_TOOLS", 50_000, 1, 1_000_000)
	c.KeySearchUnits = r.integer("TOOLGATE_KEY_SEARCH_UNITS", 4, 1, 10000)
	c.DBControlConns = r.integer("TOOLGATE_DB_CONTROL_CONNS", 2, 1, 100)
}

// Validate checks settings that may also have been changed by flags.
func (c Config) Validate() error {
	if u, err := url.Parse(c.DatabaseURL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return &Error{"DATABASE_URL", Redact(c.DatabaseURL), "want postgres://user@host:port/db"}
	}
	if u, err := url.Parse(c.DatabaseReadURL); c.DatabaseReadURL != "" && (err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql")) {
		return &Error{"DATABASE_READ_URL", Redact(c.DatabaseReadURL), "want postgres://user@host:port/db (a read replica of DATABASE_URL)"}
	}
	if u, err := url.Parse(c.OTLPEndpoint); c.OTLPEndpoint != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
		return &Error{"TOOLGATE_OTLP_ENDPOINT", c.OTLPEndpoint, "want an OTLP/HTTP base URL such as http://collector:4318"}
	}
	host, _, err := net.SplitHostPort(c.ListenAddr)
	if err != nil {
		return &Error{"LISTEN_ADDR", c.ListenAddr, "want host:port or :port"}
	}
	if c.Open && !c.OpenRemote && host != "" && !httpguard.IsLoopback(host) {
		return &Error{"LISTEN_ADDR", c.ListenAddr, "open mode (no API key, every caller admin) listens on loopback only, " +
			"e.g. 127.0.0.1:8080 or :8080; set TOOLGATE_OPEN_REMOTE=true to serve it on other addresses"}
	}
	if c.Open && len(c.CORSOrigins) > 0 {
		return &Error{"TOOLGATE_CORS_ORIGINS", strings.Join(c.CORSOrigins, ","), "not in open mode: there every caller is admin without a key, so a page of a listed origin would act as admin; use keys or OAuth"}
	}
	switch c.Role {
	case RoleAll, RoleAPI, RoleWorker:
	default:
		return &Error{"TOOLGATE_ROLE", string(c.Role), "want all, api or worker"}
	}
	switch c.LogFormat {
	case LogFormatAuto, "json", "text":
	default:
		return &Error{"TOOLGATE_LOG_FORMAT", c.LogFormat, "want auto, json or text"}
	}
	switch c.Embedder {
	case "local", "local-words":
	case "openai":
		if c.EmbedDims == 0 {
			return &Error{"TOOLGATE_EMBED_DIMS", "", "required with TOOLGATE_EMBEDDER=openai (the model's vector length, e.g. 1536)"}
		}
	default:
		return &Error{"TOOLGATE_EMBEDDER", c.Embedder, "want local, local-words or openai"}
	}
	switch c.SearchPlan {
	case "none", "rewrite", "decompose", "full":
	default:
		return &Error{"TOOLGATE_SEARCH_PLAN", c.SearchPlan, "want none, rewrite, decompose or full"}
	}
	switch c.SearchFusion {
	case "rrf", "minmax", "dbsf":
	default:
		return &Error{"TOOLGATE_SEARCH_FUSION", c.SearchFusion, "want rrf, minmax or dbsf"}
	}
	switch c.Enricher {
	case "heuristic", "openai":
	default:
		return &Error{"TOOLGATE_ENRICHER", c.Enricher, "want heuristic or openai"}
	}
	for name, u := range map[string]string{"TOOLGATE_EMBED_URL": c.EmbedURL, "TOOLGATE_LLM_URL": c.LLMURL} {
		if pu, err := url.Parse(u); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			return &Error{name, u, "want an http(s) base URL such as https://api.openai.com/v1"}
		}
	}
	if c.HTTPReadTimeout < c.HTTPReadHeaderTimeout {
		// net/http would cut every request at the shorter one anyway
		return &Error{"TOOLGATE_HTTP_READ_TIMEOUT", c.HTTPReadTimeout.String(), fmt.Sprintf(
			"must be at least TOOLGATE_HTTP_READ_HEADER_TIMEOUT (%s): it bounds the whole request, headers included", c.HTTPReadHeaderTimeout)}
	}
	if c.SearchLogKeep < 24*time.Hour {
		return &Error{"TOOLGATE_SEARCH_LOG_RETENTION", c.SearchLogKeep.String(), "must be at least 24h"}
	}
	if err := c.validatePlanRerank(); err != nil {
		return err
	}
	return c.validateRescue()
}

// ServeAddr is the address to listen on: LISTEN_ADDR, except that open mode without
// TOOLGATE_OPEN_REMOTE puts a port without a host (":8080", every interface) on 127.0.0.1,
// so that no other machine reaches a server where every caller is admin.
func (c Config) ServeAddr() string {
	host, port, err := net.SplitHostPort(c.ListenAddr)
	if err != nil || host != "" || !c.Open || c.OpenRemote {
		return c.ListenAddr
	}
	return net.JoinHostPort("127.0.0.1", port)
}

// validateRescue checks that a job left running is rescued only once no live worker can
// still be on it: River cancels an attempt at its kind's timeout, so a rescue threshold at
// or below a timeout would retry jobs that are merely slow, and run them twice at once.
func (c Config) validateRescue() error {
	if c.RescueAfter == 0 {
		return nil
	}
	// The job timeouts as jobs.Deps computes them (jobs.Deps.Timeout). The housekeeping
	// jobs' JobTimeout is left out: a sync's timeout always exceeds it.
	longest := []struct {
		kind, setting string
		timeout       time.Duration
	}{
		{"enrich_tool", "TOOLGATE_ENRICH_TIMEOUT", c.EnrichTimeout},
		{"reweight", "TOOLGATE_REWEIGHT_TIMEOUT", c.ReweightTimeout},
		{"sync_source", "TOOLGATE_SYNC_TIMEOUT + TOOLGATE_JOB_TIMEOUT", c.SyncTimeout + c.JobTimeout},
	}
	for _, j := range longest {
		if c.RescueAfter <= j.timeout {
			return &Error{"TOOLGATE_RESCUE_AFTER", c.RescueAfter.String(), fmt.Sprintf(
				"must be longer than every job's timeout, and a %s job may run %s (%s); raise it or leave it unset to derive it",
				j.kind, j.timeout, j.setting)}
		}
	}
	return nil
}

// Redact hides a password in a database URL. A value that is not a URL (a keyword/value
// connection string, a URL with a stray % or #) is hidden whole: it may hold a password.
func Redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" {
		return "<not shown: not a URL>"
	}
	if u.User == nil {
		return s
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// reader parses settings, keeping the first error.
type reader struct {
	getenv func(string) string
	err    error
}

func (r *reader) fail(name, value, reason string) {
	if r.err == nil {
		r.err = &Error{name, value, reason}
	}
}

func (r *reader) str(name, def string) string {
	if v := strings.TrimSpace(r.getenv(name)); v != "" {
		return v
	}
	return def
}

func (r *reader) boolean(name string, def bool) bool {
	v := strings.TrimSpace(r.getenv(name))
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		r.fail(name, v, "want true or false")
	}
	return b
}

func (r *reader) integer(name string, def, min, max int) int {
	v := strings.TrimSpace(r.getenv(name))
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		r.fail(name, v, fmt.Sprintf("want an integer from %d to %d", min, max))
	}
	return n
}

func (r *reader) float(name string, def, min, max float64) float64 {
	v := strings.TrimSpace(r.getenv(name))
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < min || f > max {
		r.fail(name, v, fmt.Sprintf("want a number from %g to %g", min, max))
	}
	return f
}

func (r *reader) duration(name string, def time.Duration) time.Duration {
	v := strings.TrimSpace(r.getenv(name))
	if v == "" {
		return def
	}
	if days, ok := strings.CutSuffix(v, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n > 0 {
			return time.Duration(n) * 24 * time.Hour
		}
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		r.fail(name, v, "want a positive duration such as 30s, 5m or 90d")
	}
	return d
}

// durationOrOff reads a duration, or "off", which is -1.
func (r *reader) durationOrOff(name string, def time.Duration) time.Duration {
	if strings.EqualFold(strings.TrimSpace(r.getenv(name)), "off") {
		return -1
	}
	return r.duration(name, def)
}

// commands reads a list of commands: entries separated by commas, the words of an entry
// by spaces (so no word can hold a comma or a space). Empty entries are skipped.
func (r *reader) commands(name string) [][]string {
	v := strings.TrimSpace(r.getenv(name))
	if v == "" {
		return nil
	}
	var out [][]string
	for entry := range strings.SplitSeq(v, ",") {
		words := strings.Fields(entry)
		if len(words) == 0 {
			continue
		}
		for _, w := range words {
			names, ok := strings.CutPrefix(w, mcpclient.EnvWord)
			if !ok {
				continue
			}
			if len(words) == 1 {
				r.fail(name, v, fmt.Sprintf("entry %q: %s comes after a command", entry, w))
			}
			for n := range strings.SplitSeq(names, ":") {
				switch {
				case !mcpclient.ValidEnvName(n):
					r.fail(name, v, fmt.Sprintf("entry %q: env name %q: want letters, digits and _, separated by ':'", entry, n))
				case mcpclient.EnvChangesWhatRuns(n):
					r.fail(name, v, fmt.Sprintf("entry %q: env %s changes which program or code the command runs; it cannot be allowed", entry, n))
				}
			}
		}
		out = append(out, words)
	}
	return out
}

func (r *reader) level(name string, def slog.Level) slog.Level {
	v := strings.TrimSpace(r.getenv(name))
	if v == "" {
		return def
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(v)); err != nil {
		r.fail(name, v, "want debug, info, warn or error")
	}
	return l
}
