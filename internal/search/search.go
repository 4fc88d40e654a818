// Package search finds the tools that fit a request: one read-only SQL statement runs a
// bounded Okapi BM25 lexical branch, a pgvector HNSW branch and the meaning branch, fuses them
// (TOOLGATE_SEARCH_FUSION: min-max by default, dbsf, or reciprocal rank) and puts exactly
// named tools first (see sql/queries/search.sql); a planned or reranked search's rankings are
// then merged and reranked with no database connection held, and the retrieval log row is
// written once, with the final ranking.
package search

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/meaning"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/plan"
	"github.com/toolgate/toolgate/internal/rerank"
)

// Mode selects the branches a search runs.
type Mode string

const (
	ModeHybrid  Mode = "hybrid"
	ModeLexical Mode = "lexical"
	ModeVector  Mode = "vector"
)

// Format is the shape of the tool schemas in a response.
type Format string

const (
	FormatOpenAI    Format = "openai"
	FormatAnthropic Format = "anthropic"
	FormatMCP       Format = "mcp"
	FormatRaw       Format = "raw"
	// The model vendors' own tool search (docs/vendors.md): a result's tool is the OpenAI
	// Responses function tool with defer_loading (the answer over REST is the whole
	// tool_search_output item), or the Anthropic tool_reference block (the answer over REST is
	// the whole tool_result block).
	FormatOpenAIToolSearch       Format = "openai_tool_search"
	FormatAnthropicToolReference Format = "anthropic_tool_reference"
)

// shortlistPerCandidate sizes the lexical branch's shortlist: per query variant, the tools
// with the best partial scores (from the postings fetched) that are scored exactly, as a
// multiple of the ranked candidates the branch hands to fusion.
const shortlistPerCandidate = 3

// Input limits.
const (
	MaxQueryChars = 2000 // per query and per variant, in characters
	MaxVariants   = 8    // extra query variants
	MaxK          = 100
	DefaultK      = 5
	maxFilter     = 100 // entries of sources or tags
	// maxName bounds, in characters, a name a request carries: a source or tag filter
	// entry, a profile, a session id, a feedback tool name. Real ones are far shorter.
	maxName = 200
)

// Settings tune the search; DefaultSettings gives the documented defaults.
type Settings struct {
	Fusion        Fusion  // how the branches' rankings become one (FusionRRF when empty)
	KRRF          float64 // reciprocal rank fusion constant
	WeightLexical float64 // fusion weight of the lexical branch (every fusion method)
	WeightVector  float64 // fusion weight of the vector branch (every fusion method)
	// VectorConfidence τ (0: off) scales the vector branch's weight of a query text by
	// min(1, m / τ), m its list's best cosine similarity: a branch that found nothing close
	// has less say. For the built-in local embedder, whose similarities say how many words
	// two texts share (DefaultVectorConfidence); a model's similarities sit on another scale.
	VectorConfidence float64
	// WeightMeaning is the weight of the meaning branch (0: off), which re-scores the
	// candidates of a hybrid search by the cosine of their meaning and the query's
	// (internal/meaning): the offline default's notion of meaning, for the built-in local
	// embedder (DefaultWeightMeaning); a model's embeddings carry meaning already.
	WeightMeaning float64
	// WeightMemory is the weight of the memory branch (0: off): the queries of the caller's
	// tenant's and the operator's past searches that led an agent to a tool, nearest to the
	// request's vector, vote for that tool (docs/learning.md). A memory list weighs
	// WeightMemory times its best similarity.
	WeightMemory float64
	// MemoryNeighbors is how many nearest memories per query text vote.
	MemoryNeighbors int
	// MemoryMinSimilarity is the least cosine similarity of a memory that votes.
	MemoryMinSimilarity float64
	// WeightDemotion is how much negative evidence costs a tool (0: off): its score is
	// divided by 1 + WeightDemotion × (times the caller's tenant or the operator was
	// returned it first and used another tool, plus its failed calls, less its uses).
	WeightDemotion float64
	// MemoryExactMax is how many memories a tenant may have (as the memory sweep last
	// counted them) for the memory branch to scan them exactly, one distance each, rather
	// than walk the HNSW index filtered by tenant (docs/learning.md#cost). Both find the
	// same nearest memories, but for the HNSW walk's approximation; a negative value walks
	// the index whatever the count.
	MemoryExactMax int
	EfSearch       int // hnsw.ef_search for the vector branch (raised to the candidates when below)
	Candidates     int // ranked candidates per branch and variant fed to fusion (at least k)
	Postings       int // per query term, the top postings by impact the lexical branch scores
	// LexicalTerms is how many of a query variant's rarest terms choose the lexical
	// candidates (each its top Postings); every term still scores them.
	LexicalTerms int
	// StatementTimeout bounds the search statement (0: no bound): past it the statement is
	// cancelled and the search fails with ErrStatementTimeout, so that one heavy search
	// cannot hold a pooled connection for long.
	StatementTimeout time.Duration
	// EmbedTimeout bounds the embedding of the query (retries included): past it, or when
	// the provider fails, a hybrid search runs its lexical branch only and a vector search
	// fails with an EmbedError.
	EmbedTimeout time.Duration
	// QueryIDF weights the words of a query by their idf in the lexical index before the
	// local embedder embeds it (embed.Weighted; other embedders ignore it).
	QueryIDF bool

	// Planner answers requests with a plan other than none; nil means the heuristic planner
	// without a vocabulary (task splitting and shorthand, no entity lists).
	Planner plan.Planner
	// DefaultPlan is the plan of a request that asks for none, brings no variants and whose
	// key has no default plan, made by DefaultPlanner (nil: the heuristic planner without a
	// vocabulary) whatever Planner is, so that it never calls a model. A default plan that
	// leaves the query as it is (one task) is dropped: the request runs as a plain search.
	DefaultPlan    plan.Mode
	DefaultPlanner plan.Planner
	// Reranker reorders the fused candidates; nil means no reranking.
	Reranker      rerank.Reranker
	RerankTopN    int           // fused candidates sent to the reranker (at least k are)
	RerankTimeout time.Duration // bound of one rerank call
}

// DefaultSettings are min-max fusion with branch weights 1.5 (lexical) and 1 (vector)
// (k_rrf 60 for rrf), ef_search 40, 20 candidates per branch, 30 postings per query term
// (chosen on the ScaleMCP and multi-domain evaluation sets, docs/search.md#fusion and
// #settings), 2 s to embed the query, 5 s for the statement, requests split into tasks by
// the heuristic planner unless they ask otherwise (docs/planning.md#the-default-plan). BM25's
// k1 and b are not settings: they are fixed in sql/functions/bm25.sql, with the impacts the
// index stores.
func DefaultSettings() Settings {
	return Settings{Fusion: FusionMinMax, KRRF: 60, WeightLexical: 1.5, WeightVector: 1, DefaultPlan: plan.ModeDecompose,
		EfSearch: 40, Candidates: 20, Postings: 30, LexicalTerms: 10, EmbedTimeout: 2 * time.Second,
		StatementTimeout: 5 * time.Second, RerankTopN: 30, RerankTimeout: 2 * time.Second,
		WeightMemory: DefaultWeightMemory, MemoryNeighbors: DefaultMemoryNeighbors, MemoryMinSimilarity: DefaultMemoryMinSimilarity,
		MemoryExactMax: DefaultMemoryExactMax, WeightDemotion: DefaultWeightDemotion}
}

// The memory branch's defaults (docs/learning.md#settings): chosen with the built-in local
// embedder on learning curves of the traffic halves of testdata/mcp-traffic and
// testdata/mcp-traffic-dense (docs/eval.md, learning curve): a memory votes from cosine 0.1
// on, its list weighs twice the vector branch. A heavier list lifted those sets further but
// ranked the siblings of the taught tools first on testdata/mcp-multidomain.
const (
	DefaultWeightMemory        = 2.0
	DefaultMemoryNeighbors     = 10
	DefaultMemoryMinSimilarity = 0.1
)

// DefaultWeightDemotion is WeightDemotion's default: off. On learning curves it lifted the
// requests for tools the traffic taught on testdata/mcp-traffic but lost the others, and
// lost on testdata/mcp-multidomain (docs/learning.md#negative-evidence).
const DefaultWeightDemotion = 0

// DefaultMemoryExactMax is MemoryExactMax's default: below the count at which the exact scan
// and the HNSW walk cost the same, measured on 100,000 random memories (docs/benchmarks.md,
// the cost of learning).
const DefaultMemoryExactMax = 10000

// DefaultVectorConfidence is VectorConfidence with the built-in local embedder, chosen on the
// development half of testdata/mcp-paraphrase (docs/search.md#vector-confidence).
const DefaultVectorConfidence = 0.4

// DefaultWeightMeaning is WeightMeaning with the built-in local embedder, chosen on the
// development half of testdata/mcp-paraphrase (docs/search.md#meaning).
const DefaultWeightMeaning = 0.3

// Fusion is how the candidates of the branches (and of the query variants) become one
// ranking: a candidate's share from each list it is in is summed (docs/search.md#fusion).
type Fusion string

const (
	FusionRRF    Fusion = "rrf"    // w / (k_rrf + rank): reciprocal rank fusion
	FusionMinMax Fusion = "minmax" // w · score min-max normalized over the list
	FusionDBSF   Fusion = "dbsf"   // w · score normalized over μ ± 3σ of the list
)

// Service runs searches. Embedder may be nil: lexical searches still work, hybrid searches
// then run their lexical branch only.
type Service struct {
	pool     *pgxpool.Pool // the primary: the retrieval log, and searches without a replica
	read     *pgxpool.Pool // a read replica for searches, or nil
	embedder embed.Embedder
	settings Settings
	log      *slog.Logger
	metrics  *metrics.Metrics // counts feedback labels; nil counts nothing
	logs     *logWriter       // the retrieval log's rows, on the primary
}

// Option configures a Service.
type Option func(*Service)

// WithReadPool makes the Service search on read, a read replica of pool's database (hot
// standby): it runs the search statement there and writes the retrieval log row to the
// primary. A tool changed on the primary shows in results once the replica has replayed the
// change (its replication lag).
func WithReadPool(read *pgxpool.Pool) Option { return func(s *Service) { s.read = read } }

// WithMetrics makes the Service count the labels its feedback records
// (toolgate_search_labels_total); the searches are counted where they are answered (the API,
// the MCP gateway), which know the endpoint.
func WithMetrics(m *metrics.Metrics) Option { return func(s *Service) { s.metrics = m } }

// New returns a Service.
func New(pool *pgxpool.Pool, embedder embed.Embedder, settings Settings, logger *slog.Logger, opts ...Option) *Service {
	if settings.LexicalTerms <= 0 {
		// a zero budget would choose no lexical candidates at all
		settings.LexicalTerms = DefaultSettings().LexicalTerms
	}
	s := &Service{pool: pool, embedder: embedder, settings: settings, log: logger.With("component", "search"),
		logs: newLogWriter(pool, settings.StatementTimeout)}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Search runs r for caller c: it only ever sees the sources c may see (c.Sources; nil
// means every source), a request that asks for no plan gets c's default plan, and the
// retrieval log names c. Code that searches on nobody's behalf passes Internal().
func (s *Service) Search(ctx context.Context, c auth.Caller, r Request) (Response, error) {
	pr, err := s.prepare(ctx, c, r)
	if err != nil {
		return Response{}, err
	}
	read := s.readPool()
	start := time.Now()
	// The statement and its settings are one batch, one round trip, one implicit transaction:
	// the connection goes back to the pool before anything else happens.
	rows, err := s.run(ctx, read, pr)
	if err != nil && pr.req.Mode == ModeHybrid && len(pr.params.Vecs) > 0 && otherSpace(err) {
		// Another process moved the stored vectors to its embedder's space (the first start
		// of a new built-in default, in a rolling upgrade): keyword retrieval until this one
		// is restarted with that embedder.
		s.log.WarnContext(ctx, "the stored vectors are of another embedding space than this process's embedder: restart it with the stored one",
			"embedder", s.embedder.Model(), "error", err)
		pr.params.Vecs = []pgvector.Vector{}
		pr.degraded = "vector branch skipped: the stored vectors are of another embedding space than this server's embedder"
		rows, err = s.run(ctx, read, pr)
	}
	if err != nil {
		if s.read != nil {
			return Response{}, fmt.Errorf("search on the read replica: %w", statementError(ctx, err))
		}
		return Response{}, fmt.Errorf("search: %w", statementError(ctx, err))
	}
	resp := pr.response(rows[0])
	resp.Timings.Embed, resp.Timings.Statement = pr.embed, time.Since(start)
	start = time.Now()
	used := s.fill(ctx, &resp, pr, rows) // merging and reranking, with no connection held
	resp.Timings.Rerank = time.Since(start)
	setConfidence(&resp, used, pr.req.Query, pr.params.WMeaning, len(pr.params.Texts) > 0, len(pr.params.Vecs) > 0)
	if err := s.explainAsked(ctx, read, pr, &resp, used); err != nil {
		return Response{}, err
	}
	if len(pr.req.ExplainTools) > 0 {
		if err := s.whyNot(ctx, read, pr, &resp, rows[0], used); err != nil {
			return Response{}, err
		}
	}
	if err := s.writeLog(ctx, pr, &resp, used); err != nil {
		return Response{}, fmt.Errorf("search: write the log row: %w", err)
	}
	return resp, nil
}

// readPool is where searches read: the replica, if any, else the primary.
func (s *Service) readPool() *pgxpool.Pool {
	if s.read != nil {
		return s.read
	}
	return s.pool
}

// prepare validates r, plans it, embeds its texts and builds the statement's parameters:
// everything a search does before it reaches the database that runs it.
func (s *Service) prepare(ctx context.Context, c auth.Caller, r Request) (*prepared, error) {
	r, planner, defaulted := s.withDefaultPlan(c, r)
	r, err := normalize(r)
	if err != nil {
		return nil, err
	}
	var allowed []string
	if c.Sources != nil {
		allowed = append([]string{}, c.Sources...) // non-nil: may be empty (sees nothing)
	}
	names := db.New(s.readPool()) // read where the search will read
	if err := s.checkNames(ctx, names, r, allowed); err != nil {
		return nil, err
	}
	rerankOn := s.settings.Reranker != nil && (r.Rerank == nil || *r.Rerank)
	if r.Rerank != nil && *r.Rerank && s.settings.Reranker == nil {
		return nil, &InvalidRequestError{Field: "rerank", Reason: "no reranker is configured (TOOLGATE_RERANKER)"}
	}
	p, intents, err := s.planIntents(ctx, &r, planner, defaulted)
	if err != nil {
		return nil, err
	}
	qt := textsOf(intents)
	lexTexts, vecTexts := withConcepts(qt.texts), withConcepts(qt.texts)
	switch {
	case r.Mode == ModeLexical:
		vecTexts = nil
	case r.Mode == ModeVector:
		if s.embedder == nil {
			return nil, ErrNoEmbedder
		}
		lexTexts = nil
	case s.embedder == nil: // hybrid without an embedding provider: keyword retrieval only
		vecTexts = nil
	}
	vecs, embedTook, degraded, err := s.embedQuery(ctx, r.Mode, vecTexts, allowed)
	if err != nil {
		return nil, err
	}
	meanings, err := s.meanings(r.Mode, lexTexts)
	if err != nil {
		return nil, err
	}

	st := s.settings
	// n: the ranked tools per intent, and the merged candidates (the reranker's top N).
	n := r.K
	if rerankOn {
		n = max(r.K, st.RerankTopN)
	}
	cand := max(st.Candidates, n)
	filters, err := json.Marshal(map[string]any{"sources": r.Sources, "tags": r.Tags})
	if err != nil {
		return nil, err
	}
	variants := r.Queries
	var planJSON json.RawMessage
	if p != nil {
		variants = qt.texts
		if planJSON, err = json.Marshal(p); err != nil {
			return nil, err
		}
	}
	callerName, callerKey := cmp.Or(c.Name, internalCaller), pgtype.Int8{Int64: c.KeyID, Valid: c.KeyID != 0}
	params := db.SearchParams{
		Sources: r.Sources, Allowed: allowed, Texts: emptyIfNil(lexTexts), Postings: int32(st.Postings),
		LexicalTerms: int32(st.LexicalTerms), Shortlist: int32(shortlistPerCandidate * cand),
		TextVariants: qt.textVariants, TextGroups: qt.textGroups, Tags: r.Tags, Profile: optional(r.Profile), Vecs: vecs,
		Fusion: string(cmp.Or(st.Fusion, FusionRRF)), Cand: int32(cand), NameKeys: emptyIfNil(qt.keys), NameGroups: emptyIfNil(qt.keyGroups), WLex: st.WeightLexical, KRrf: st.KRRF, WVec: st.WeightVector, VecConfidence: st.VectorConfidence,
		Meanings: meanings, WMeaning: st.WeightMeaning,
		WMemory: st.WeightMemory, MemoryK: int32(max(st.MemoryNeighbors, 1)), MemoryMinSim: st.MemoryMinSimilarity,
		MemoryExact: int32(st.MemoryExactMax), WDemotion: st.WeightDemotion,
		PerGroup: int32(n), SessionID: optional(r.SessionID), Caller: optional(callerName), CallerKeyID: callerKey,
		Tenant: optional(c.Tenant), Query: r.Query,
	}
	entry := logRow{
		Query: r.Query, Variants: emptyIfNil(variants), Mode: string(r.Mode), K: int32(r.K), Filters: filters,
		Format: string(r.Format), Plan: planJSON, Caller: optional(callerName), CallerKeyID: callerKey,
		SessionID: optional(r.SessionID), Endpoint: string(cmp.Or(r.Endpoint, EndpointInternal)), Tenant: c.Tenant,
	}
	return &prepared{req: r, plan: p, tenant: c.Tenant, intents: len(intents), texts: qt.texts, n: n, rerankOn: rerankOn,
		config: db.SearchSetConfigParams{EfSearch: strconv.Itoa(max(st.EfSearch, cand)), StatementTimeout: statementTimeout(st.StatementTimeout)},
		params: params, log: entry, degraded: degraded, embed: embedTook}, nil
}

// meanings are the meaning vectors of a hybrid search's lexical texts, one per text, for the
// meaning branch; none when the branch is off. A text without a word the lexicon knows gets
// the zero vector, which the statement skips (no meaning list for that text).
func (s *Service) meanings(mode Mode, texts []string) ([]pgvector.SparseVector, error) {
	if s.settings.WeightMeaning <= 0 || mode != ModeHybrid || len(texts) == 0 {
		return []pgvector.SparseVector{}, nil
	}
	space, err := meaning.Builtin()
	if err != nil {
		return nil, err
	}
	out := make([]pgvector.SparseVector, len(texts))
	for i, t := range texts {
		if v, ok := space.Vector(t); ok {
			out[i] = v
		} else {
			out[i] = pgvector.NewSparseVectorFromMap(nil, meaning.Dims)
		}
	}
	return out, nil
}

// withDefaultPlan gives a request that asks for no plan and brings no variants its key's
// default plan, or else the service's. It returns the planner to plan with and whether the
// plan is the service's default (which a one-task plan then drops, see planIntents).
func (s *Service) withDefaultPlan(c auth.Caller, r Request) (Request, plan.Planner, bool) {
	planner, defaulted := s.settings.Planner, false
	if r.Plan == "" && len(r.Queries) == 0 {
		switch {
		case c.Plan != "":
			r.Plan = c.Plan
		case s.settings.DefaultPlan != "" && s.settings.DefaultPlan != plan.ModeNone:
			r.Plan, planner, defaulted = s.settings.DefaultPlan, s.settings.DefaultPlanner, true
		}
	}
	return r, planner, defaulted
}

// planIntents plans r and returns the plan (nil without one) and its intents: without a
// plan, the query and its variants as the one intent. A default plan of one task is the
// plain search, and r's plan is set to none so that the log says so.
func (s *Service) planIntents(ctx context.Context, r *Request, planner plan.Planner, defaulted bool) (*plan.Plan, []plan.Intent, error) {
	intents := []plan.Intent{{Query: r.Query, Variants: r.Queries}}
	if r.Plan == plan.ModeNone {
		return nil, intents, nil
	}
	if planner == nil {
		planner = plan.NewHeuristic(nil)
	}
	pl, err := planner.Plan(ctx, r.Query, r.Plan)
	if err != nil {
		return nil, nil, fmt.Errorf("plan query: %w", err)
	}
	if pl.Fallback != "" {
		s.log.WarnContext(ctx, "planner fell back to the heuristic plan", "reason", pl.Fallback, "err", pl.Err)
	}
	if defaulted && len(pl.Intents) == 1 && pl.Intents[0].Query == r.Query && len(pl.Intents[0].Variants) == 0 {
		r.Plan = plan.ModeNone // one task: the plain search, logged as such
		return nil, intents, nil
	}
	return &pl, pl.Intents, nil
}

// queryTexts are the statement's texts and name keys, each with the intent (1-based) it
// serves.
type queryTexts struct {
	texts                    []string // distinct, each searched once
	textVariants, textGroups []int32  // per intent text: its index in texts, its intent
	keys                     []string // exact-name keys
	keyGroups                []int32  // the intent of each key
}

// textsOf collects the distinct texts of every intent with the intents they serve: without
// a plan, the query and its variants, all intent 1; with tasks that carry the whole request
// as a variant, the request is one text serving every task.
func textsOf(intents []plan.Intent) queryTexts {
	var qt queryTexts
	textIndex := map[string]int32{}
	var textKeys [][]string // the name keys of each distinct text, computed once
	for i, in := range intents {
		for _, t := range append([]string{in.Query}, in.Variants...) {
			v, ok := textIndex[t]
			if !ok {
				qt.texts = append(qt.texts, t)
				textKeys = append(textKeys, nameKeys(t))
				v = int32(len(qt.texts))
				textIndex[t] = v
			}
			qt.textVariants = append(qt.textVariants, v)
			qt.textGroups = append(qt.textGroups, int32(i+1))
			for _, k := range textKeys[v-1] {
				qt.keys = append(qt.keys, k)
				qt.keyGroups = append(qt.keyGroups, int32(i+1))
			}
		}
	}
	return qt
}

// explainAsked explains the results when the request asked for it (explain, on the
// database the search read, after the search: its time is not in Timings).
func (s *Service) explainAsked(ctx context.Context, to batcher, pr *prepared, resp *Response, rows []db.SearchRow) error {
	if !pr.req.Explain {
		return nil
	}
	return s.explain(ctx, to, pr, resp, rows)
}

// prepared is a validated, planned and embedded search, ready to run on a database.
type prepared struct {
	req      Request
	plan     *plan.Plan // nil without a plan
	intents  int        // intents of the plan (1 without)
	texts    []string   // the distinct texts of the intents (params.TextVariants index them)
	n        int        // ranked tools per intent: k, or the reranker's top N
	rerankOn bool
	tenant   string                   // the caller's tenant (auth.Caller.Tenant): explain shows its memories alone
	config   db.SearchSetConfigParams // the statement's per-transaction settings
	params   db.SearchParams
	log      logRow // the log row, but for what the search decides
	degraded string // why a branch was skipped, or ""
	embed    time.Duration
}

// merges: the statement's per-intent rankings are merged (and maybe reranked) in Go.
func (pr *prepared) merges() bool { return pr.plan != nil || pr.rerankOn }

// response is the answer's frame, without results and search id, from the statement's
// first row (every row carries the experiment arm and the profile that served the search).
func (pr *prepared) response(first db.SearchRow) Response {
	return Response{Mode: pr.req.Mode, Format: pr.req.Format, Results: []Result{},
		Plan: pr.plan, Degraded: pr.degraded, Experiment: experimentArm(first), Profile: first.Profile}
}

// experimentArm is the A/B experiment arm that served the search, or nil.
func experimentArm(row db.SearchRow) *ExperimentArm {
	if !row.ExperimentID.Valid || row.Arm == nil {
		return nil
	}
	return &ExperimentArm{ID: row.ExperimentID.Int64, Arm: db.ExperimentArm(*row.Arm), Profile: deref(row.ArmProfile)}
}

// run sends the per-transaction settings and the Search statement to to in one round trip
// (a pipeline: one implicit transaction) and returns the statement's rows.
func (s *Service) run(ctx context.Context, to batcher, pr *prepared) ([]db.SearchRow, error) {
	qp := db.New(newPipeline(to))
	if err := qp.SearchSetConfig(ctx, pr.config); err != nil {
		return nil, err
	}
	rows, err := qp.Search(ctx, pr.params)
	if err == nil && len(rows) == 0 {
		err = errors.New("the statement returned no row")
	}
	return rows, err
}

// statementTimeout is d as statement_timeout's milliseconds: "0" (none) for d <= 0, at
// least 1 for a positive d.
func statementTimeout(d time.Duration) string {
	if d <= 0 {
		return "0"
	}
	return strconv.FormatInt(max(d.Milliseconds(), 1), 10)
}

func emptyIfNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
