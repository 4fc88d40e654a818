package rerank

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/toolgate/toolgate/internal/provider"
)

// Style is the wire format of a rerank API.
type Style string

const (
	// StyleCohere: Cohere /v1/rerank and /v2/rerank. Request {model, query, documents,
	// top_n}; answer {results: [{index, relevance_score}]}.
	StyleCohere Style = "cohere"
	// StyleJina: Jina /v1/rerank, the same shape as Cohere (also served by vLLM, Voyage
	// and others).
	StyleJina Style = "jina"
	// StyleTEI: Hugging Face text-embeddings-inference /rerank. Request {query, texts};
	// answer [{index, score}] for every text.
	StyleTEI Style = "tei"
)

// HTTP is a client of a rerank API. It makes one attempt per call: reranking is bounded by
// a short timeout and has the fused ranking to fall back on, so a retry would only be late.
type HTTP struct {
	model  string
	style  Style
	client *provider.Client
}

// NewHTTP makes the client of the rerank endpoint endpoint (the full URL, such as
// https://api.cohere.com/v2/rerank). key, if any, is sent as a bearer token; model is
// sent to cohere and jina. client nil means a default *http.Client. obs, if not nil,
// records each call (operation OpRerank).
func NewHTTP(endpoint, key, model string, style Style, client *http.Client, obs *provider.Observer) (*HTTP, error) {
	switch style {
	case StyleCohere, StyleJina, StyleTEI:
	default:
		return nil, &KindError{Setting: "rerank style", Value: string(style)}
	}
	if u, err := url.Parse(endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &KindError{Setting: "rerank URL", Value: endpoint}
	}
	pc := provider.New(provider.Config{BaseURL: endpoint, Key: key, HTTPClient: client, Concurrency: 16, Observer: obs})
	return &HTTP{model: model, style: style, client: pc}, nil
}

// OpRerank is the operation label of rerank API calls in provider metrics and spans. (The
// llm reranker's calls are chat calls of its chat client.)
const OpRerank = "rerank"

// Name is "http".
func (h *HTTP) Name() string { return KindHTTP }

type cohereRequest struct {
	Model     string   `json:"model,omitempty"`
	Query     string   `json:"query"`
	Documents []string `json:"documents"`
	TopN      int      `json:"top_n"`
}

type cohereResponse struct {
	Results *[]struct {
		Index          *int     `json:"index"`
		RelevanceScore *float64 `json:"relevance_score"`
	} `json:"results"`
}

type teiRequest struct {
	Query string   `json:"query"`
	Texts []string `json:"texts"`
}

type teiResult struct {
	Index *int     `json:"index"`
	Score *float64 `json:"score"`
}

// Rerank sends docs' texts and returns the provider's scores, best first, at most topN.
func (h *HTTP) Rerank(ctx context.Context, query string, docs []Doc, topN int) ([]Result, error) {
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = d.Text
	}
	var body any = cohereRequest{Model: h.model, Query: query, Documents: texts, TopN: topN}
	if h.style == StyleTEI {
		body = teiRequest{Query: query, Texts: texts}
	}
	// The answer is checked inside the provider call, so that a malformed one counts as a
	// failed call in the provider metrics and span.
	var out []Result
	var call provider.Call
	if h.style == StyleTEI {
		var res []teiResult
		call = provider.Call{Out: &res, Check: func() (int, error) {
			for i, r := range res {
				if r.Index == nil || r.Score == nil {
					return 0, &MalformedError{Reason: fmt.Sprintf("result %d lacks index or score", i)}
				}
				out = append(out, Result{Index: *r.Index, Score: *r.Score})
			}
			return 0, check(out, len(docs))
		}}
	} else {
		var res cohereResponse
		call = provider.Call{Out: &res, Check: func() (int, error) {
			if res.Results == nil {
				return 0, &MalformedError{Reason: `no "results"`}
			}
			for i, r := range *res.Results {
				if r.Index == nil || r.RelevanceScore == nil {
					return 0, &MalformedError{Reason: fmt.Sprintf("result %d lacks index or relevance_score", i)}
				}
				out = append(out, Result{Index: *r.Index, Score: *r.RelevanceScore})
			}
			return 0, check(out, len(docs))
		}}
	}
	call.Op, call.In = OpRerank, body
	if err := h.client.Do(ctx, call); err != nil {
		return nil, err
	}
	sortResults(out)
	return out[:min(topN, len(out))], nil
}
