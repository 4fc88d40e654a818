package rerank

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/internal/llm"
)

// promptRerank is adapted from Toolshed's post-retrieval modules (seed 001, appendix C
// fig. 19): "rerank and discard irrelevant tools, selecting only the top-k most relevant
// tools" with an LLM, which Toolshed prefers to a cross-encoder for its reasoning. The
// candidates come numbered in the user message; the model scores every one so that the
// answer can be checked against the list.
const promptRerank = `You rerank tools for an AI agent. Given a user query and a numbered list of candidate tools (name and description), judge how useful each tool is for answering the query or one of its parts.

Score every candidate from 0 to 1: 1 for a tool the agent needs to answer the query, around 0.5 for a tool that may help, 0 for an irrelevant tool. When the query asks about several entities or several things, every tool needed for any part of it is relevant. Judge by the tool's purpose, not by shared words.

Answer with one JSON object and nothing else, one entry per candidate:
{"scores": [{"index": 0, "score": 0.9}, {"index": 1, "score": 0.1}]}`

// LLM reranks with a chat model: one prompt scores all candidates.
type LLM struct{ chat Chat }

// NewLLM makes the LLM reranker.
func NewLLM(c Chat) *LLM { return &LLM{chat: c} }

// Name is "llm".
func (l *LLM) Name() string { return KindLLM }

// maxDocText bounds the text of one candidate in the prompt, in bytes.
const maxDocText = 600

// Rerank asks the model to score every doc and returns the topN best scored.
func (l *LLM) Rerank(ctx context.Context, query string, docs []Doc, topN int) ([]Result, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "Query:\n<query>\n%s\n</query>\n\nCandidate tools:\n", query)
	for i, d := range docs {
		text := d.Text
		if len(text) > maxDocText {
			text = text[:maxDocText] + "…"
		}
		fmt.Fprintf(&b, "[%d] %s\n", i, strings.ReplaceAll(text, "\n", " "))
	}
	answer, err := l.chat.Complete(ctx, []llm.Message{{Role: "system", Content: promptRerank}, {Role: "user", Content: b.String()}}, true)
	if err != nil {
		return nil, err
	}
	res, err := parseScores(answer.Content, len(docs))
	if err != nil {
		return nil, err
	}
	sortResults(res)
	return res[:min(topN, len(res))], nil
}

// parseScores reads {"scores": [{"index", "score"}]}: every index in range and at most
// once, every score from 0 to 1. Candidates the model left out are not returned.
func parseScores(answer string, n int) ([]Result, error) {
	answer = llm.Unfence(answer)
	var a struct {
		Scores *[]struct {
			Index *int     `json:"index"`
			Score *float64 `json:"score"`
		} `json:"scores"`
	}
	if err := json.Unmarshal([]byte(answer), &a); err != nil {
		return nil, &MalformedError{Reason: "not JSON scores: " + err.Error()}
	}
	if a.Scores == nil || len(*a.Scores) == 0 {
		return nil, &MalformedError{Reason: `no "scores"`}
	}
	out := make([]Result, 0, len(*a.Scores))
	for i, s := range *a.Scores {
		switch {
		case s.Index == nil || s.Score == nil:
			return nil, &MalformedError{Reason: fmt.Sprintf("score %d lacks index or score", i)}
		case *s.Score < 0 || *s.Score > 1:
			return nil, &MalformedError{Reason: fmt.Sprintf("score %g of index %d is outside 0..1", *s.Score, *s.Index)}
		}
		out = append(out, Result{Index: *s.Index, Score: *s.Score})
	}
	if err := check(out, n); err != nil {
		return nil, err
	}
	return out, nil
}
