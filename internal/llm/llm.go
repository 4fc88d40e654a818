// Package llm is an OpenAI-compatible /v1/chat/completions client: bounded concurrency,
// retries with backoff on 429 and 5xx, JSON-mode output and token accounting.
package llm

import (
	"context"
	"strings"

	"github.com/toolgate/toolgate/internal/provider"
)

// OpChat is the operation label of chat completion calls in provider metrics and spans,
// whatever the completion is for (enrichment, planning, reranking).
const OpChat = "chat"

// Config configures the client.
type Config struct {
	Provider    provider.Config
	Model       string  // e.g. gpt-4o-mini
	Temperature float64 // 0 for the most repeatable output
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role"` // system, user or assistant
	Content string `json:"content"`
}

// Result is a completion with the tokens it cost.
type Result struct {
	Content          string
	PromptTokens     int
	CompletionTokens int
}

// Client talks to one chat completions endpoint.
type Client struct {
	cfg    Config
	client *provider.Client
}

// New returns the client.
func New(cfg Config) *Client {
	return &Client{cfg: cfg, client: provider.New(cfg.Provider)}
}

// Model is the model name requests are sent with.
func (c *Client) Model() string { return c.cfg.Model }

type responseFormat struct {
	Type string `json:"type"`
}

type chatRequest struct {
	Model          string          `json:"model"`
	Messages       []Message       `json:"messages"`
	Temperature    float64         `json:"temperature"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// Complete sends messages and returns the first choice. With jsonMode the request asks for
// a JSON object (`response_format: {"type":"json_object"}`); the caller still validates it.
func (c *Client) Complete(ctx context.Context, messages []Message, jsonMode bool) (Result, error) {
	req := chatRequest{Model: c.cfg.Model, Messages: messages, Temperature: c.cfg.Temperature}
	if jsonMode {
		req.ResponseFormat = &responseFormat{Type: "json_object"}
	}
	var resp chatResponse
	check := func() (int, error) {
		tokens := resp.Usage.PromptTokens + resp.Usage.CompletionTokens
		if len(resp.Choices) == 0 {
			return tokens, &provider.BadResponseError{URL: c.cfg.Provider.BaseURL + "/chat/completions", Reason: "no choices"}
		}
		return tokens, nil
	}
	if err := c.client.Do(ctx, provider.Call{Op: OpChat, Path: "/chat/completions", In: req, Out: &resp, Check: check}); err != nil {
		return Result{}, err
	}
	return Result{
		Content:          resp.Choices[0].Message.Content,
		PromptTokens:     resp.Usage.PromptTokens,
		CompletionTokens: resp.Usage.CompletionTokens,
	}, nil
}

// Unfence returns a model's JSON answer without the Markdown code fence some providers put
// around it even in JSON mode (```json ... ```, ```JSON, or a bare ```), trimmed.
func Unfence(answer string) string {
	answer = strings.TrimSpace(answer)
	s, ok := strings.CutPrefix(answer, "```")
	if !ok {
		return answer
	}
	// the fence's info string (json, JSON, ...) runs to the end of its line
	if tag, rest, found := strings.Cut(s, "\n"); found && !strings.ContainsAny(tag, "{[") {
		s = rest
	} else if len(s) >= 4 && strings.EqualFold(s[:4], "json") {
		s = s[4:]
	}
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "```"))
}
