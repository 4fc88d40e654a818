// Package search finds the tools that fit a request: one SQL statement runs a bounded Okapi
// BM25 lexical branch and a pgvector HNSW branch, fuses them by reciprocal rank, puts exactly
// named tools first and writes the retrieval log row (see sql/queries/search.sql).
package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
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

// Input limits.
const (
	MaxQueryChars = 2000 // per query and per variant, in characters
	MaxVariants   = 8    // extra query variants
	MaxK          = 100
	DefaultK      = 5
	maxFilter     = 100 // entries of sources or tags
)

// Settings tune the search; DefaultSettings gives the documented defaults.
type Settings struct {
	K1            float64 // BM25 term-frequency saturation
	B             float64 // BM25 length normalization
	KRRF          float64 // reciprocal rank fusion constant
	WeightLexical float64 // RRF weight of the lexical branch
	WeightVector  float64 // RRF weight of the vector branch
	EfSearch      int     // hnsw.ef_search for the vector branch
	Candidates    int     // ranked candidates per branch and variant fed to fusion (at least k)
	Postings      int     // per query term, the top postings by impact the lexical branch scores
}

// DefaultSettings are k1 1.2, b 0.75, k_rrf 60, branch weights 1, ef_search 64,
// 50 candidates per branch, 100 postings per query term.
func DefaultSettings() Settings {
	return Settings{K1: 1.2, B: 0.75, KRRF: 60, WeightLexical: 1, WeightVector: 1,
		EfSearch: 64, Candidates: 50, Postings: 100}
}

// Request is one search.
type Request struct {
	Query     string   `json:"query"`
	Queries   []string `json:"queries,omitempty"` // extra query variants, fused with Query
	K         int      `json:"k,omitempty"`
	Mode      Mode     `json:"mode,omitempty"`
	Sources   []string `json:"sources,omitempty"`
	Tags      []string `json:"tags,omitempty"`
	Profile   string   `json:"profile,omitempty"`
	Format    Format   `json:"format,omitempty"`
	SessionID string   `json:"session_id,omitempty"`
	// Plan is logged as is (the query planner's output, when one made the variants).
	Plan json.RawMessage `json:"-"`
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
}

// Service runs searches. Embedder may be nil: lexical searches still work, hybrid searches
// then run their lexical branch only.
type Service struct {
	pool     *pgxpool.Pool
	embedder embed.Embedder
	settings Settings
	log      *slog.Logger
}

// New returns a Service.
func New(pool *pgxpool.Pool, embedder embed.Embedder, settings Settings, logger *slog.Logger) *Service {
	return &Service{pool: pool, embedder: embedder, settings: settings, log: logger.With("component", "search")}
}

// normalize validates r and fills in its defaults.
func normalize(r Request) (Request, error) {
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
	if r.K < 1 || r.K > MaxK {
		return r, &InvalidRequestError{Field: "k", Reason: fmt.Sprintf("%d is out of range 1..%d", r.K, MaxK)}
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
	var err error
	if r.Sources, err = cleanList("sources", r.Sources, false); err != nil {
		return r, err
	}
	if r.Tags, err = cleanList("tags", r.Tags, true); err != nil {
		return r, err
	}
	r.Profile = strings.TrimSpace(r.Profile)
	if utf8.RuneCountInString(r.SessionID) > 200 {
		return r, &InvalidRequestError{Field: "session_id", Reason: "at most 200 characters"}
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
	for _, s := range in {
		s = strings.TrimSpace(s)
		if lower {
			s = strings.ToLower(s)
		}
		if s == "" {
			return nil, &InvalidRequestError{Field: field, Reason: "entries must not be empty"}
		}
		out = append(out, s)
	}
	return out, nil
}

// Search runs r for the caller of ctx: it only ever sees the sources the caller may see.
func (s *Service) Search(ctx context.Context, r Request) (Response, error) {
	r, err := normalize(r)
	if err != nil {
		return Response{}, err
	}
	var allowed []string
	callerName := "internal"
	if c := auth.FromContext(ctx); c != nil {
		callerName = c.Name
		if c.Sources != nil {
			allowed = append([]string{}, c.Sources...) // non-nil: may be empty (sees nothing)
		}
	}
	q := db.New(s.pool)
	if err := s.checkNames(ctx, q, r, allowed); err != nil {
		return Response{}, err
	}

	texts := append([]string{r.Query}, r.Queries...)
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
	vecs := []pgvector.Vector{}
	var embedMs float64
	if len(vecTexts) > 0 {
		start := time.Now()
		vs, err := s.embedder.Embed(ctx, vecTexts)
		if err != nil {
			return Response{}, fmt.Errorf("embed query: %w", err)
		}
		if len(vs) != len(vecTexts) {
			return Response{}, fmt.Errorf("embed query: %d vectors for %d texts", len(vs), len(vecTexts))
		}
		embedMs = float64(time.Since(start).Microseconds()) / 1000
		for _, v := range vs {
			vecs = append(vecs, pgvector.NewVector(v))
		}
	}

	st := s.settings
	cand := max(st.Candidates, r.K)
	filters, err := json.Marshal(map[string]any{"sources": r.Sources, "tags": r.Tags})
	if err != nil {
		return Response{}, err
	}
	params := db.SearchParams{
		Sources: r.Sources, Allowed: allowed, Texts: emptyIfNil(lexTexts), Postings: int32(st.Postings),
		K1: st.K1, B: st.B, Tags: r.Tags, Profile: optional(r.Profile), Vecs: vecs,
		Cand: int32(cand), NameTexts: texts, WLex: st.WeightLexical, KRrf: st.KRRF, WVec: st.WeightVector,
		K: int32(r.K), Query: r.Query, Variants: emptyIfNil(r.Queries), Mode: string(r.Mode),
		Filters: filters, Format: string(r.Format), Plan: r.Plan, EmbedMs: embedMs,
		Caller: optional(callerName), SessionID: optional(r.SessionID),
	}
	var rows []db.SearchRow
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		qtx := q.WithTx(tx)
		if err := qtx.SearchSetConfig(ctx, strconv.Itoa(st.EfSearch)); err != nil {
			return err
		}
		var err error
		rows, err = qtx.Search(ctx, params)
		return err
	})
	if err != nil {
		return Response{}, fmt.Errorf("search: %w", err)
	}
	if len(rows) == 0 {
		return Response{}, errors.New("search: the statement returned no log row")
	}
	resp := Response{SearchID: rows[0].SearchID, Mode: r.Mode, Format: r.Format, Results: []Result{}}
	for _, row := range rows {
		if row.Name == nil {
			continue // the single row of an empty result
		}
		tool, err := formatTool(r.Format, row)
		if err != nil {
			return Response{}, err
		}
		resp.Results = append(resp.Results, Result{
			Name: *row.Name, Source: deref(row.Source), Score: row.Score,
			LexicalRank: rank(row.LexicalRank), VectorRank: rank(row.VectorRank),
			BM25: row.Bm25, NameMatch: row.NameMatch > 0, Version: deref(row.ContentHash), Tool: tool,
		})
	}
	return resp, nil
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

// RecordFeedback stores which tools were called after search id.
func (s *Service) RecordFeedback(ctx context.Context, id int64, tools []Feedback) error {
	if len(tools) == 0 || len(tools) > MaxK {
		return &InvalidRequestError{Field: "tools", Reason: fmt.Sprintf("want 1 to %d tools", MaxK)}
	}
	names := make([]string, len(tools))
	succ := make([]bool, len(tools))
	for i, t := range tools {
		names[i] = strings.TrimSpace(t.Name)
		if names[i] == "" {
			return &InvalidRequestError{Field: fmt.Sprintf("tools[%d].name", i), Reason: "must not be empty"}
		}
		if t.Success == nil {
			return &InvalidRequestError{Field: fmt.Sprintf("tools[%d].success", i), Reason: "must be true or false"}
		}
		succ[i] = *t.Success
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		ok, err := q.SearchLogExists(ctx, id)
		if err != nil {
			return err
		}
		if !ok {
			return &NotFoundError{ID: id}
		}
		_, err = q.InsertSearchFeedback(ctx, db.InsertSearchFeedbackParams{SearchID: id, Names: names, Successes: succ})
		return err
	})
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

func emptyIfNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
