// Package search finds the tools that fit a request: one SQL statement runs a bounded Okapi
// BM25 lexical branch and a pgvector HNSW branch, fuses them by reciprocal rank, puts exactly
// named tools first and writes the retrieval log row (see sql/queries/search.sql).
package search

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/pgtext"
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
	K1            float64 // BM25 term-frequency saturation
	B             float64 // BM25 length normalization
	Fusion        Fusion  // how the branches' rankings become one (FusionRRF when empty)
	KRRF          float64 // reciprocal rank fusion constant
	WeightLexical float64 // RRF weight of the lexical branch
	WeightVector  float64 // RRF weight of the vector branch
	EfSearch      int     // hnsw.ef_search for the vector branch (raised to the candidates when below)
	Candidates    int     // ranked candidates per branch and variant fed to fusion (at least k)
	Postings      int     // per query term, the top postings by impact the lexical branch scores
	// LexicalTerms is how many of a query variant's rarest terms choose the lexical
	// candidates (each its top Postings); every term still scores them.
	LexicalTerms int
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

// DefaultSettings are k1 1.2, b 0.75, min-max fusion with branch weights 1.5 (lexical) and
// 1 (vector) (k_rrf 60 for rrf), ef_search 40, 20 candidates per branch, 30 postings per
// query term (chosen on the ScaleMCP and multi-domain evaluation sets, docs/search.md#fusion
// and #settings), 2 s to embed the query, requests split into tasks by the heuristic
// planner unless they ask otherwise (docs/planning.md#the-default-plan).
func DefaultSettings() Settings {
	return Settings{K1: 1.2, B: 0.75, Fusion: FusionMinMax, KRRF: 60, WeightLexical: 1.5, WeightVector: 1, DefaultPlan: plan.ModeDecompose,
		EfSearch: 40, Candidates: 20, Postings: 30, LexicalTerms: 10, EmbedTimeout: 2 * time.Second, RerankTopN: 30, RerankTimeout: 2 * time.Second}
}

// Fusion is how the candidates of the branches (and of the query variants) become one
// ranking: a candidate's share from each list it is in is summed (docs/search.md#fusion).
type Fusion string

const (
	FusionRRF    Fusion = "rrf"    // w / (k_rrf + rank): reciprocal rank fusion
	FusionMinMax Fusion = "minmax" // w · score min-max normalized over the list
	FusionDBSF   Fusion = "dbsf"   // w · score normalized over μ ± 3σ of the list
)

// Request is one search.
type Request struct {
	Query   string   `json:"query"`
	Queries []string `json:"queries,omitempty"` // extra query variants, fused with Query
	// K is how many tools to return, 1 to MaxK; 0 means DefaultK. Over JSON an absent "k"
	// means DefaultK and an explicit 0 is out of range (UnmarshalJSON).
	K         int      `json:"k,omitempty"`
	Mode      Mode     `json:"mode,omitempty"`
	Sources   []string `json:"sources,omitempty"`
	Tags      []string `json:"tags,omitempty"`
	Profile   string   `json:"profile,omitempty"`
	Format    Format   `json:"format,omitempty"`
	SessionID string   `json:"session_id,omitempty"`
	// Plan is the query planning asked for: none (default), rewrite, decompose or full.
	Plan plan.Mode `json:"plan,omitempty"`
	// Rerank asks for reranking; nil means yes when a reranker is configured.
	Rerank *bool `json:"rerank,omitempty"`
}

// UnmarshalJSON reads a request body strictly (an unknown field is an error) and tells an
// absent "k", which means DefaultK, from an explicit 0, which is out of range like any other
// k below 1.
func (r *Request) UnmarshalJSON(b []byte) error {
	type fields Request // the same fields without this method
	var w struct {
		*fields
		K *int `json:"k"` // shadows fields.K: a pointer tells absent from 0
	}
	w.fields = (*fields)(r)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return err
	}
	if w.K != nil {
		if *w.K == 0 {
			return kOutOfRange(0)
		}
		r.K = *w.K
	}
	return nil
}

func kOutOfRange(k int) error {
	return &InvalidRequestError{Field: "k", Reason: fmt.Sprintf("%d is out of range 1..%d", k, MaxK)}
}

// Result is one ranked tool.
type Result struct {
	Name   string  `json:"name"`
	Source string  `json:"source"`
	Score  float64 `json:"score"`
	// Ranks in each branch (best over the query variants); nil when the branch missed it.
	LexicalRank *int `json:"lexical_rank"`
	VectorRank  *int `json:"vector_rank"`
	// BM25 is the tool's best Okapi BM25 score over the query variants (0 when the lexical
	// branch missed it).
	BM25 float64 `json:"bm25"`
	// NameMatch is true when the tool's name matched the query, which puts it first.
	NameMatch bool `json:"name_match"`
	// Intent is the plan intent whose share placed the tool (only with a plan).
	Intent *int `json:"intent,omitempty"`
	// RerankScore is the reranker's score (only for tools the reranker scored).
	RerankScore *float64 `json:"rerank_score,omitempty"`
	// Version is the tool's content hash: it changes whenever the definition does.
	Version string          `json:"version"`
	Tool    json.RawMessage `json:"tool"`
}

// Response is the answer to a Request.
type Response struct {
	SearchID int64    `json:"search_id"`
	Mode     Mode     `json:"mode"`
	Format   Format   `json:"format"`
	Results  []Result `json:"results"`
	// Plan and Rerank are what the planner and the reranker did (absent when not asked for).
	Plan   *plan.Plan       `json:"plan,omitempty"`
	Rerank *rerank.Decision `json:"rerank,omitempty"`
	// Degraded says why a branch was skipped: a hybrid search whose query could not be
	// embedded ran its lexical branch only. Absent when both branches ran.
	Degraded string `json:"degraded,omitempty"`
	// Timings are where the search's time went, for metrics (not part of the answer).
	Timings Timings `json:"-"`
}

// Timings of one search. Embed is zero when no query was embedded.
type Timings struct {
	Embed     time.Duration // embedding the query (the vector branch's own cost)
	Statement time.Duration // the SQL statement(s), log row included, round trips included
}

// Service runs searches. Embedder may be nil: lexical searches still work, hybrid searches
// then run their lexical branch only.
type Service struct {
	pool     *pgxpool.Pool // the primary: the retrieval log, and searches without a replica
	read     *pgxpool.Pool // a read replica for searches, or nil
	readSQL  readOnlyStatement
	embedder embed.Embedder
	settings Settings
	log      *slog.Logger
}

// Option configures a Service.
type Option func(*Service)

// WithReadPool makes the Service search on read, a read replica of pool's database (hot
// standby): it reads the catalog there and writes the retrieval log row to the primary.
func WithReadPool(read *pgxpool.Pool) Option { return func(s *Service) { s.read = read } }

// New returns a Service.
func New(pool *pgxpool.Pool, embedder embed.Embedder, settings Settings, logger *slog.Logger, opts ...Option) *Service {
	if settings.LexicalTerms <= 0 {
		// a zero budget would choose no lexical candidates at all
		settings.LexicalTerms = DefaultSettings().LexicalTerms
	}
	s := &Service{pool: pool, embedder: embedder, settings: settings, log: logger.With("component", "search")}
	for _, o := range opts {
		o(s)
	}
	return s
}

// checkText fails when s cannot be PostgreSQL text: the statement would fail on it.
func checkText(field, s string) error {
	if p := pgtext.Problem(s); p != "" {
		return &InvalidRequestError{Field: field, Reason: p}
	}
	return nil
}

// normalize validates r and fills in its defaults.
func normalize(r Request) (Request, error) {
	for _, f := range [...]struct{ name, value string }{{"query", r.Query}, {"mode", string(r.Mode)},
		{"format", string(r.Format)}, {"plan", string(r.Plan)}, {"profile", r.Profile}, {"session_id", r.SessionID}} {
		if err := checkText(f.name, f.value); err != nil {
			return r, err
		}
	}
	r.Query = strings.TrimSpace(r.Query)
	if r.Query == "" {
		return r, &InvalidRequestError{Field: "query", Reason: "must not be empty"}
	}
	if n := utf8.RuneCountInString(r.Query); n > MaxQueryChars {
		return r, &InvalidRequestError{Field: "query", Reason: fmt.Sprintf("%d characters, at most %d allowed", n, MaxQueryChars)}
	}
	if len(r.Queries) > MaxVariants {
		return r, &InvalidRequestError{Field: "queries", Reason: fmt.Sprintf("%d variants, at most %d allowed", len(r.Queries), MaxVariants)}
	}
	variants := make([]string, 0, len(r.Queries))
	for i, q := range r.Queries {
		if err := checkText(fmt.Sprintf("queries[%d]", i), q); err != nil {
			return r, err
		}
		q = strings.TrimSpace(q)
		if q == "" {
			return r, &InvalidRequestError{Field: fmt.Sprintf("queries[%d]", i), Reason: "must not be empty"}
		}
		if n := utf8.RuneCountInString(q); n > MaxQueryChars {
			return r, &InvalidRequestError{Field: fmt.Sprintf("queries[%d]", i), Reason: fmt.Sprintf("%d characters, at most %d allowed", n, MaxQueryChars)}
		}
		variants = append(variants, q)
	}
	r.Queries = variants
	if r.K == 0 {
		r.K = DefaultK
	}
	mode, err := plan.ParseMode(string(r.Plan))
	if err != nil {
		return r, &InvalidRequestError{Field: "plan", Reason: fmt.Sprintf("%q is not none, rewrite, decompose or full", r.Plan)}
	}
	r.Plan = mode
	if mode != plan.ModeNone && len(r.Queries) > 0 {
		return r, &InvalidRequestError{Field: "queries", Reason: "not allowed with a plan: the planner makes the variants"}
	}
	if r.K < 1 || r.K > MaxK {
		return r, kOutOfRange(r.K)
	}
	switch r.Mode {
	case "":
		r.Mode = ModeHybrid
	case ModeHybrid, ModeLexical, ModeVector:
	default:
		return r, &InvalidRequestError{Field: "mode", Reason: fmt.Sprintf("%q is not hybrid, lexical or vector", r.Mode)}
	}
	switch r.Format {
	case "":
		r.Format = FormatOpenAI
	case FormatOpenAI, FormatAnthropic, FormatMCP, FormatRaw:
	default:
		return r, &InvalidRequestError{Field: "format", Reason: fmt.Sprintf("%q is not openai, anthropic, mcp or raw", r.Format)}
	}
	if r.Sources, err = cleanList("sources", r.Sources, false); err != nil {
		return r, err
	}
	if r.Tags, err = cleanList("tags", r.Tags, true); err != nil {
		return r, err
	}
	r.Profile = strings.TrimSpace(r.Profile)
	if utf8.RuneCountInString(r.Profile) > maxName {
		return r, &InvalidRequestError{Field: "profile", Reason: fmt.Sprintf("at most %d characters", maxName)}
	}
	if utf8.RuneCountInString(r.SessionID) > maxName {
		return r, &InvalidRequestError{Field: "session_id", Reason: fmt.Sprintf("at most %d characters", maxName)}
	}
	return r, nil
}

func cleanList(field string, in []string, lower bool) ([]string, error) {
	if len(in) == 0 {
		return nil, nil
	}
	if len(in) > maxFilter {
		return nil, &InvalidRequestError{Field: field, Reason: fmt.Sprintf("at most %d entries", maxFilter)}
	}
	out := make([]string, 0, len(in))
	for i, s := range in {
		if err := checkText(fmt.Sprintf("%s[%d]", field, i), s); err != nil {
			return nil, err
		}
		s = strings.TrimSpace(s)
		if lower {
			s = strings.ToLower(s)
		}
		if s == "" {
			return nil, &InvalidRequestError{Field: field, Reason: "entries must not be empty"}
		}
		if utf8.RuneCountInString(s) > maxName {
			return nil, &InvalidRequestError{Field: fmt.Sprintf("%s[%d]", field, i), Reason: fmt.Sprintf("at most %d characters", maxName)}
		}
		out = append(out, s)
	}
	return out, nil
}

// Search runs r for caller c: it only ever sees the sources c may see (c.Sources; nil
// means every source), a request that asks for no plan gets c's default plan, and the
// retrieval log names c. Code that searches on nobody's behalf passes Internal().
func (s *Service) Search(ctx context.Context, c auth.Caller, r Request) (Response, error) {
	// A request that asks for no plan and brings no variants gets its key's default plan,
	// or else the service's.
	planner, defaulted := s.settings.Planner, false
	if r.Plan == "" && len(r.Queries) == 0 {
		switch {
		case c.Plan != "":
			r.Plan = c.Plan
		case s.settings.DefaultPlan != "" && s.settings.DefaultPlan != plan.ModeNone:
			r.Plan, planner, defaulted = s.settings.DefaultPlan, s.settings.DefaultPlanner, true
		}
	}
	r, err := normalize(r)
	if err != nil {
		return Response{}, err
	}
	var allowed []string
	if c.Sources != nil {
		allowed = append([]string{}, c.Sources...) // non-nil: may be empty (sees nothing)
	}
	callerName, callerKey := cmp.Or(c.Name, internalCaller), pgtype.Int8{Int64: c.KeyID, Valid: c.KeyID != 0}
	names := db.New(s.pool) // read where the search will read
	if s.read != nil {
		names = db.New(s.read)
	}
	if err := s.checkNames(ctx, names, r, allowed); err != nil {
		return Response{}, err
	}

	rerankOn := s.settings.Reranker != nil && (r.Rerank == nil || *r.Rerank)
	if r.Rerank != nil && *r.Rerank && s.settings.Reranker == nil {
		return Response{}, &InvalidRequestError{Field: "rerank", Reason: "no reranker is configured (TOOLGATE_RERANKER)"}
	}
	var p *plan.Plan
	intents := []plan.Intent{{Query: r.Query, Variants: r.Queries}}
	if r.Plan != plan.ModeNone {
		if planner == nil {
			planner = plan.NewHeuristic(nil)
		}
		pl, err := planner.Plan(ctx, r.Query, r.Plan)
		if err != nil {
			return Response{}, fmt.Errorf("plan query: %w", err)
		}
		if pl.Fallback != "" {
			s.log.WarnContext(ctx, "planner fell back to the heuristic plan", "reason", pl.Fallback, "err", pl.Err)
		}
		if defaulted && len(pl.Intents) == 1 && pl.Intents[0].Query == r.Query && len(pl.Intents[0].Variants) == 0 {
			r.Plan = plan.ModeNone // one task: the plain search, logged as such
		} else {
			p, intents = &pl, pl.Intents
		}
	}
	// The distinct texts of every intent, each searched once, with the intents (1-based) it
	// serves: without a plan, the query and its variants, all intent 1; with tasks that
	// carry the whole request as a variant, the request is one text serving every task.
	var texts, keys []string
	var textVariants, textGroups, keyGroups []int32
	textIndex := map[string]int32{}
	for i, in := range intents {
		for _, t := range append([]string{in.Query}, in.Variants...) {
			v, ok := textIndex[t]
			if !ok {
				texts = append(texts, t)
				v = int32(len(texts))
				textIndex[t] = v
			}
			textVariants = append(textVariants, v)
			textGroups = append(textGroups, int32(i+1))
			for _, k := range nameKeys(t) {
				keys = append(keys, k)
				keyGroups = append(keyGroups, int32(i+1))
			}
		}
	}
	lexTexts, vecTexts := texts, texts
	switch {
	case r.Mode == ModeLexical:
		vecTexts = nil
	case r.Mode == ModeVector:
		if s.embedder == nil {
			return Response{}, ErrNoEmbedder
		}
		lexTexts = nil
	case s.embedder == nil: // hybrid without an embedding provider: keyword retrieval only
		vecTexts = nil
	}
	vecs, embedTook, degraded, err := s.embedQuery(ctx, r.Mode, vecTexts)
	if err != nil {
		return Response{}, err
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
		return Response{}, err
	}
	variants := r.Queries
	var planJSON json.RawMessage
	if p != nil {
		variants = texts
		if planJSON, err = json.Marshal(p); err != nil {
			return Response{}, err
		}
	}
	params := db.SearchParams{
		Sources: r.Sources, Allowed: allowed, Texts: emptyIfNil(lexTexts), Postings: int32(st.Postings),
		LexicalTerms: int32(st.LexicalTerms), Shortlist: int32(shortlistPerCandidate * cand),
		TextVariants: textVariants, TextGroups: textGroups, K1: st.K1, B: st.B, Tags: r.Tags, Profile: optional(r.Profile), Vecs: vecs,
		Fusion: string(cmp.Or(st.Fusion, FusionRRF)), Cand: int32(cand), NameKeys: emptyIfNil(keys), NameGroups: emptyIfNil(keyGroups), WLex: st.WeightLexical, KRrf: st.KRRF, WVec: st.WeightVector,
		PerGroup: int32(n), K: int32(r.K), Query: r.Query, Variants: emptyIfNil(variants), Mode: string(r.Mode),
		Filters: filters, Format: string(r.Format), Plan: planJSON, EmbedMs: ms(embedTook), Degraded: optional(degraded),
		Caller: optional(callerName), CallerKeyID: callerKey, SessionID: optional(r.SessionID),
	}
	pr := &prepared{req: r, plan: p, intents: len(intents), n: n, rerankOn: rerankOn,
		ef: strconv.Itoa(max(st.EfSearch, cand)), params: params, degraded: degraded, embed: embedTook}
	if s.read != nil {
		return s.searchReplica(ctx, pr)
	}
	start := time.Now()
	if !pr.merges() {
		// The whole search is one batch, one implicit transaction: settings, statement, log row.
		rows, err := s.run(ctx, s.pool, nil, pr)
		if err != nil {
			return Response{}, fmt.Errorf("search: %w", err)
		}
		resp := pr.response(rows[0].SearchID)
		if err := s.fill(ctx, &resp, pr, rows); err != nil {
			return Response{}, fmt.Errorf("search: %w", err)
		}
		resp.Timings = Timings{Embed: pr.embed, Statement: time.Since(start)}
		return resp, nil
	}
	// A plan or a reranker: merge the intents' rankings, rerank, and rewrite the log row's
	// results with the final list in the same transaction.
	var resp Response
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := s.run(ctx, tx, nil, pr)
		if err != nil {
			return err
		}
		resp = pr.response(rows[0].SearchID)
		if err := s.fill(ctx, &resp, pr, rows); err != nil {
			return err
		}
		results, rerankJSON, err := logJSON(resp.Results, resp.Rerank)
		if err != nil {
			return err
		}
		return db.New(tx).SearchLogResults(ctx, db.SearchLogResultsParams{Results: results, Rerank: rerankJSON, ID: resp.SearchID})
	})
	if err != nil {
		return Response{}, fmt.Errorf("search: %w", err)
	}
	// includes merging and reranking, which run inside the transaction
	resp.Timings = Timings{Embed: pr.embed, Statement: time.Since(start)}
	return resp, nil
}

// prepared is a validated, planned and embedded search, ready to run on a database.
type prepared struct {
	req      Request
	plan     *plan.Plan // nil without a plan
	intents  int        // intents of the plan (1 without)
	n        int        // ranked tools per intent: k, or the reranker's top N
	rerankOn bool
	ef       string // hnsw.ef_search
	params   db.SearchParams
	degraded string // why a branch was skipped, or ""
	embed    time.Duration
}

// merges: the statement's per-intent rankings are merged (and maybe reranked) in Go.
func (pr *prepared) merges() bool { return pr.plan != nil || pr.rerankOn }

// response is the answer's frame, without results.
func (pr *prepared) response(searchID int64) Response {
	return Response{SearchID: searchID, Mode: pr.req.Mode, Format: pr.req.Format, Results: []Result{},
		Plan: pr.plan, Degraded: pr.degraded}
}

// run sends the per-transaction settings and the Search statement (rewritten by rewrite,
// when not nil) to to in one round trip (a pipeline) and returns the statement's rows.
func (s *Service) run(ctx context.Context, to batcher, rewrite func(string) (string, error), pr *prepared) ([]db.SearchRow, error) {
	pl := newPipeline(to)
	pl.rewrite = rewrite
	qp := db.New(pl)
	if err := qp.SearchSetConfig(ctx, pr.ef); err != nil {
		return nil, err
	}
	rows, err := qp.Search(ctx, pr.params)
	if err == nil && len(rows) == 0 {
		err = errors.New("the statement returned no row")
	}
	return rows, err
}

// fill adds the results of rows to resp: as the statement ranked them, or, with a plan or a
// reranker, the per-intent rankings merged by plan.Merge and reranked (mergeRerank), with
// each result's intent and rerank score and the rerank decision.
func (s *Service) fill(ctx context.Context, resp *Response, pr *prepared, rows []db.SearchRow) error {
	if !pr.merges() {
		return appendRows(resp, pr.req.Format, rows)
	}
	final, decision := s.mergeRerank(ctx, pr, rows)
	if err := appendRows(resp, pr.req.Format, final.rows); err != nil {
		return err
	}
	for i := range resp.Results {
		res := &resp.Results[i]
		if pr.plan != nil {
			res.Intent = &final.intents[i]
		}
		if sc, ok := final.scores[res.Name]; ok {
			res.RerankScore = &sc
		}
	}
	resp.Rerank = decision
	return nil
}

// logJSON is the results column of the search_log row of results (the entries the Search
// statement writes, with intent and rerank score when present) and its rerank column.
func logJSON(results []Result, decision *rerank.Decision) (json.RawMessage, json.RawMessage, error) {
	logged := make([]map[string]any, len(results))
	for i, res := range results {
		e := map[string]any{"name": res.Name, "score": res.Score, "lexical_rank": res.LexicalRank,
			"vector_rank": res.VectorRank, "bm25": res.BM25, "name_match": res.NameMatch}
		if res.Intent != nil {
			e["intent"] = *res.Intent
		}
		if res.RerankScore != nil {
			e["rerank_score"] = *res.RerankScore
		}
		logged[i] = e
	}
	out, err := json.Marshal(logged)
	if err != nil || decision == nil {
		return out, nil, err
	}
	rr, err := json.Marshal(decision)
	return out, rr, err
}

// embedQuery embeds texts within the EmbedTimeout. A failure fails a vector search
// (EmbedError); a hybrid search goes on with no query vector, degraded says why.
func (s *Service) embedQuery(ctx context.Context, mode Mode, texts []string) (vecs []pgvector.Vector, took time.Duration, degraded string, err error) {
	vecs = []pgvector.Vector{}
	if len(texts) == 0 {
		return vecs, 0, "", nil
	}
	start := time.Now()
	ectx := ctx
	if t := s.settings.EmbedTimeout; t > 0 {
		var cancel context.CancelFunc
		ectx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	vs, err := s.embed(ectx, texts)
	if err == nil && len(vs) != len(texts) {
		err = fmt.Errorf("%d vectors for %d texts", len(vs), len(texts))
	}
	took = time.Since(start)
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, "", ctx.Err() // the caller went away: nothing to degrade to
		}
		s.log.WarnContext(ctx, "query embedding failed", "mode", mode, "error", err, "ms", ms(took))
		if mode == ModeVector {
			return nil, 0, "", &EmbedError{Err: err}
		}
		// The caller learns what happened, not the provider's address or answer (logged).
		return vecs, took, "vector branch skipped: the query could not be embedded (" + (&EmbedError{Err: err}).Reason() + ")", nil
	}
	for _, v := range vs {
		vecs = append(vecs, pgvector.NewVector(v))
	}
	return vecs, took, "", nil
}

// embed embeds the query texts; an embedder that weights query words by their rarity
// (embed.Weighted) gets their idf from the lexical index, read where the search reads.
func (s *Service) embed(ctx context.Context, texts []string) ([][]float32, error) {
	w, ok := s.embedder.(embed.Weighted)
	if !ok || !s.settings.QueryIDF {
		return s.embedder.Embed(ctx, texts)
	}
	q := db.New(s.pool)
	if s.read != nil {
		q = db.New(s.read)
	}
	rows, err := q.SearchWordIDF(ctx, emptyIfNil(embed.QueryWords(texts)))
	if err != nil {
		return nil, fmt.Errorf("query word idf: %w", err)
	}
	idf := make(map[string]float64, len(rows))
	for _, r := range rows {
		idf[r.Word] = r.Idf
	}
	return w.EmbedWeighted(ctx, texts, idf)
}

// ms is d in milliseconds, to the microsecond, as the retrieval log records times.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// merged is the final list of a planned or reranked search: its rows in order, the intent
// (0-based) that placed each, and the reranker's scores by tool name.
type merged struct {
	rows    []db.SearchRow
	intents []int
	scores  map[string]float64
}

// mergeRerank builds one list of n candidates from the per-intent rankings of rows
// (plan.Merge: every intent gets its share), then reranks them into r.K (rerank.Apply, bounded
// by the rerank timeout; on failure the merged order stands). The Decision is nil when
// reranking was not asked for.
func (s *Service) mergeRerank(ctx context.Context, pr *prepared, rows []db.SearchRow) (merged, *rerank.Decision) {
	r, p, rerankOn, intents, n := pr.req, pr.plan, pr.rerankOn, pr.intents, pr.n
	perIntent := make([][]plan.Ranked, intents)
	byName := map[string]db.SearchRow{}
	for _, row := range rows {
		if row.Name == nil || row.Grp < 1 || int(row.Grp) > intents {
			continue
		}
		perIntent[row.Grp-1] = append(perIntent[row.Grp-1], plan.Ranked{ID: *row.Name, Score: row.Score})
		if prev, ok := byName[*row.Name]; !ok || row.Score > prev.Score {
			byName[*row.Name] = row
		}
	}
	list := plan.Merge(n, perIntent)
	docs := make([]rerank.Doc, len(list))
	intentOf := make(map[string]int, len(list))
	for i, m := range list {
		row := byName[m.ID]
		docs[i] = rerank.Doc{ID: m.ID, Text: m.ID + ": " + deref(row.Description), Score: m.Score}
		intentOf[m.ID] = m.Intent
	}
	query := r.Query
	if p != nil {
		query = p.Rewritten
	}
	var reranker rerank.Reranker
	if rerankOn {
		reranker = s.settings.Reranker
	}
	final, decision := rerank.Apply(ctx, reranker, query, docs, r.K, s.settings.RerankTimeout)
	out := merged{scores: map[string]float64{}}
	for _, sc := range decision.Scores {
		out.scores[sc.ID] = sc.Score
	}
	for i, d := range final {
		row := byName[d.ID]
		row.Score, row.Pos = d.Score, int32(i+1)
		out.rows = append(out.rows, row)
		out.intents = append(out.intents, intentOf[d.ID])
	}
	if !rerankOn {
		return out, nil
	}
	if !decision.Applied && decision.Fallback != "" {
		s.log.WarnContext(ctx, "rerank fell back to the fused ranking", "reranker", decision.Reranker, "reason", decision.Fallback, "err", decision.Err)
	}
	return out, &decision
}

// appendRows adds the tools of rows (in order) to resp.
func appendRows(resp *Response, format Format, rows []db.SearchRow) error {
	for _, row := range rows {
		if row.Name == nil {
			continue // the single row of an empty result
		}
		tool, err := formatTool(format, row)
		if err != nil {
			return err
		}
		resp.Results = append(resp.Results, Result{
			Name: *row.Name, Source: deref(row.Source), Score: row.Score,
			LexicalRank: rank(row.LexicalRank), VectorRank: rank(row.VectorRank),
			BM25: row.Bm25, NameMatch: row.NameMatch > 0, Version: deref(row.ContentHash), Tool: tool,
		})
	}
	return nil
}

// checkNames rejects unknown profiles and sources the caller cannot see (without telling
// apart a missing source from a hidden one).
func (s *Service) checkNames(ctx context.Context, q *db.Queries, r Request, allowed []string) error {
	if r.Profile != "" {
		ok, err := q.SearchProfileExists(ctx, r.Profile)
		if err != nil {
			return fmt.Errorf("check profile: %w", err)
		}
		if !ok {
			return &UnknownError{Kind: "profile", Names: []string{r.Profile}}
		}
	}
	if len(r.Sources) > 0 {
		known, err := q.SearchKnownSources(ctx, db.SearchKnownSourcesParams{Names: r.Sources, Allowed: allowed})
		if err != nil {
			return fmt.Errorf("check sources: %w", err)
		}
		seen := make(map[string]bool, len(known))
		for _, k := range known {
			seen[k] = true
		}
		var missing []string
		for _, n := range r.Sources {
			if !seen[n] {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			return &UnknownError{Kind: "source", Names: missing}
		}
	}
	return nil
}

// Feedback is one tool an agent called after a search.
type Feedback struct {
	Name    string `json:"name"`
	Success *bool  `json:"success"`
}

// RecordFeedback stores which tools caller c called after its search id. Only the caller
// that made a search may report on it — the same API key (search_log.caller_key_id),
// or for a search made without a key the same caller name — and only about tools that
// search returned. Another caller's search is not found, so search ids cannot be probed.
func (s *Service) RecordFeedback(ctx context.Context, c auth.Caller, id int64, tools []Feedback) error {
	if len(tools) == 0 || len(tools) > MaxK {
		return &InvalidRequestError{Field: "tools", Reason: fmt.Sprintf("want 1 to %d tools", MaxK)}
	}
	names := make([]string, len(tools))
	succ := make([]bool, len(tools))
	for i, t := range tools {
		field := fmt.Sprintf("tools[%d].name", i)
		if err := checkText(field, t.Name); err != nil {
			return err
		}
		names[i] = strings.TrimSpace(t.Name)
		if names[i] == "" {
			return &InvalidRequestError{Field: field, Reason: "must not be empty"}
		}
		if utf8.RuneCountInString(names[i]) > maxName {
			return &InvalidRequestError{Field: field, Reason: fmt.Sprintf("at most %d characters", maxName)}
		}
		if t.Success == nil {
			return &InvalidRequestError{Field: fmt.Sprintf("tools[%d].success", i), Reason: "must be true or false"}
		}
		succ[i] = *t.Success
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		row, err := q.SearchLogForFeedback(ctx, id)
		if errors.Is(err, pgx.ErrNoRows) {
			return &NotFoundError{ID: id}
		}
		if err != nil {
			return err
		}
		if !madeBy(row, c) {
			return &NotFoundError{ID: id}
		}
		for i, n := range names {
			if !slices.Contains(row.Names, n) {
				return &InvalidRequestError{Field: fmt.Sprintf("tools[%d].name", i),
					Reason: fmt.Sprintf("%q is not among the results of search %d", n, id)}
			}
		}
		_, err = q.InsertSearchFeedback(ctx, db.InsertSearchFeedbackParams{SearchID: id, Names: names, Successes: succ})
		return err
	})
}

// internalCaller is the caller name logged for searches made on nobody's behalf.
const internalCaller = "internal"

// Internal is the caller of searches made on nobody's behalf (evaluation, benchmarks, the
// CLI against its own database): every source, no key, no default plan.
func Internal() auth.Caller { return auth.Caller{Name: internalCaller} }

// madeBy reports whether the search of row was made by c: the same key, or, for a search
// without a key, the same caller name.
func madeBy(row db.SearchLogForFeedbackRow, c auth.Caller) bool {
	if row.CallerKeyID.Valid {
		return c.KeyID == row.CallerKeyID.Int64
	}
	if c.KeyID != 0 {
		return false
	}
	return row.Caller != nil && *row.Caller == cmp.Or(c.Name, internalCaller)
}

func rank(r int32) *int {
	if r <= 0 {
		return nil
	}
	v := int(r)
	return &v
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func emptyIfNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
