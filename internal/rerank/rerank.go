// Package rerank reorders the fused candidates of a search with a cross-encoder rerank API
// or an LLM (Toolshed's post-retrieval module, seed 001 section 3.4.3 and appendix C
// fig. 19). Reranking is bounded in time: Apply returns the fused ranking, and says why,
// when the reranker errs or is too slow.
package rerank

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/toolgate/toolgate/internal/llm"
	"github.com/toolgate/toolgate/internal/provider"
)

// Reranker kinds, as accepted by TOOLGATE_RERANKER and stored in Decision.Reranker.
const (
	KindNone = "none"
	KindHTTP = "http"
	KindLLM  = "llm"
)

// Doc is one candidate: the tool's name and the text the reranker reads (name and
// description). Score is its fused score.
type Doc struct {
	ID    string
	Text  string
	Score float64
}

// Result is the reranker's score of docs[Index].
type Result struct {
	Index int
	Score float64
}

// Reranker scores docs against query and returns at most topN results, best first.
type Reranker interface {
	Name() string
	Rerank(ctx context.Context, query string, docs []Doc, topN int) ([]Result, error)
}

// Chat is the chat completion call the LLM reranker needs; *llm.Client has it.
type Chat interface {
	Complete(ctx context.Context, messages []llm.Message, jsonMode bool) (llm.Result, error)
}

// MalformedError is a provider answer that is not the expected shape.
type MalformedError struct{ Reason string }

func (e *MalformedError) Error() string { return "malformed rerank answer: " + e.Reason }

// KindError is an unknown reranker kind or HTTP style, or an unusable rerank URL.
type KindError struct{ Setting, Value string }

func (e *KindError) Error() string { return fmt.Sprintf("invalid %s %q", e.Setting, e.Value) }

// Options choose and configure a reranker (the TOOLGATE_RERANK_* settings).
type Options struct {
	Kind  string // none, http or llm
	URL   string // http: the full /rerank endpoint
	Key   string // http: bearer token, if any
	Model string // http: model name sent to cohere and jina
	Style Style  // http: cohere, jina or tei
	Chat  Chat
	// Observer records the http reranker's calls; nil records nothing. (The llm reranker
	// is observed through its Chat client.)
	Observer *provider.Observer
}

// New makes the reranker of opts; nil for none.
func New(opts Options) (Reranker, error) {
	switch opts.Kind {
	case "", KindNone:
		return nil, nil
	case KindHTTP:
		return NewHTTP(opts.URL, opts.Key, opts.Model, opts.Style, nil, opts.Observer)
	case KindLLM:
		if opts.Chat == nil {
			return nil, errors.New("rerank: the llm reranker needs a chat provider")
		}
		return NewLLM(opts.Chat), nil
	}
	return nil, &KindError{Setting: "reranker", Value: opts.Kind}
}

// Decision is what Apply did; it is stored as is in search_log.rerank.
type Decision struct {
	Reranker string `json:"reranker"`
	Applied  bool   `json:"applied"`
	Fallback string `json:"fallback,omitempty"` // why the fused ranking was kept
	// Err is the failure behind Fallback, for the log only: its text may quote the
	// provider's URL, and a decision is shown to the searching caller.
	Err       error    `json:"-"`
	LatencyMS float64  `json:"latency_ms"`
	Scores    []Scored `json:"scores,omitempty"`
}

// Scored is a candidate's rerank score and its position in the fused ranking (0-based).
type Scored struct {
	ID       string  `json:"name"`
	Score    float64 `json:"score"`
	FusedPos int     `json:"fused_pos"`
}

// Apply reranks candidates (the fused ranking, best first) and keeps k. The reranked
// candidates come first, by rerank score; if the reranker returned fewer than k, the rest
// follow in fused order. On error, timeout or an invalid answer it returns the first k
// candidates unchanged and the Decision says why. r nil means no reranking.
func Apply(ctx context.Context, r Reranker, query string, candidates []Doc, k int, timeout time.Duration) ([]Doc, Decision) {
	k = max(0, min(k, len(candidates)))
	if r == nil {
		return candidates[:k], Decision{Reranker: KindNone}
	}
	d := Decision{Reranker: r.Name()}
	if k == 0 {
		return candidates[:0], d
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	res, err := r.Rerank(rctx, query, candidates, k)
	d.LatencyMS = float64(time.Since(start).Microseconds()) / 1000
	if err == nil {
		err = check(res, len(candidates))
	}
	if err != nil {
		d.Fallback, d.Err = reason(err, timeout), err
		return candidates[:k], d
	}
	res = slices.Clone(res)
	sortResults(res)
	out := make([]Doc, 0, k)
	used := make([]bool, len(candidates))
	for _, x := range res {
		if len(out) == k {
			break
		}
		used[x.Index] = true
		out = append(out, candidates[x.Index])
		d.Scores = append(d.Scores, Scored{ID: candidates[x.Index].ID, Score: x.Score, FusedPos: x.Index})
	}
	for i, c := range candidates {
		if len(out) == k {
			break
		}
		if !used[i] {
			out = append(out, c)
		}
	}
	d.Applied = true
	return out, d
}

// check rejects results a ranking cannot be built from.
func check(res []Result, n int) error {
	seen := make([]bool, n)
	for _, r := range res {
		switch {
		case r.Index < 0 || r.Index >= n:
			return &MalformedError{Reason: fmt.Sprintf("index %d out of range 0..%d", r.Index, n-1)}
		case seen[r.Index]:
			return &MalformedError{Reason: fmt.Sprintf("index %d twice", r.Index)}
		case math.IsNaN(r.Score) || math.IsInf(r.Score, 0):
			return &MalformedError{Reason: fmt.Sprintf("score of index %d is not finite", r.Index)}
		}
		seen[r.Index] = true
	}
	return nil
}

func reason(err error, timeout time.Duration) string {
	var pe *provider.ProviderError
	var rl *provider.RateLimitedError
	var br *provider.BadResponseError
	var me *MalformedError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("timeout after %s", timeout)
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &rl):
		return "provider error: rate limited"
	case errors.As(err, &pe) && pe.Status != 0:
		return fmt.Sprintf("provider error: status %d", pe.Status)
	case errors.As(err, &pe):
		return "provider error: unreachable"
	case errors.As(err, &br):
		return "malformed rerank answer: " + br.Reason
	case errors.As(err, &me):
		return me.Error()
	}
	// Not the error's text: it quotes the provider's URL, which may carry a key, and this
	// reason is shown to the searching caller (the error itself is logged).
	return "provider error"
}

// sortResults orders results best first, keeping the given order among equal scores.
func sortResults(res []Result) {
	slices.SortStableFunc(res, func(a, b Result) int { return cmp.Compare(b.Score, a.Score) })
}
