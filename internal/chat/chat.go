// Package chat is the narrow interface the planner and the LLM reranker need from a chat
// model, and a client for the OpenAI /v1/chat/completions wire format that satisfies it.
package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Usage is the token count of one completion.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// Chat completes one system + user turn. With jsonMode the provider is asked for a JSON
// object (response_format json_object); callers still validate what comes back.
type Chat interface {
	Complete(ctx context.Context, system, user string, jsonMode bool) (string, Usage, error)
}

// ProviderError is a non-2xx answer of the provider.
type ProviderError struct {
	Status int
	Body   string
}

func (e *ProviderError) Error() string {
	return fmt.Sprintf("chat provider: status %d: %s", e.Status, e.Body)
}

// ErrEmpty is a well-formed answer without a message.
var ErrEmpty = errors.New("chat provider: no choices in the answer")

// OpenAI speaks POST {BaseURL}/chat/completions (BaseURL such as https://api.openai.com/v1).
type OpenAI struct {
	BaseURL string
	Key     string
	Model   string
	HTTP    *http.Client
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type responseFormat struct {
	Type string `json:"type"`
}

type request struct {
	Model          string          `json:"model"`
	Messages       []message       `json:"messages"`
	Temperature    float64         `json:"temperature"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
}

type response struct {
	Choices []struct {
		Message message `json:"message"`
	} `json:"choices"`
	Usage Usage `json:"usage"`
}

// Complete sends one chat completion request at temperature 0.
func (c *OpenAI) Complete(ctx context.Context, system, user string, jsonMode bool) (string, Usage, error) {
	req := request{
		Model:    c.Model,
		Messages: []message{{"system", system}, {"user", user}},
	}
	if jsonMode {
		req.ResponseFormat = &responseFormat{Type: "json_object"}
	}
	body, err := json.Marshal(req)
	if err != nil {
		return "", Usage{}, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(c.BaseURL, "/")+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return "", Usage{}, err
	}
	hr.Header.Set("Content-Type", "application/json")
	if c.Key != "" {
		hr.Header.Set("Authorization", "Bearer "+c.Key)
	}
	client := c.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	res, err := client.Do(hr)
	if err != nil {
		return "", Usage{}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 4<<20))
	if err != nil {
		return "", Usage{}, err
	}
	if res.StatusCode/100 != 2 {
		return "", Usage{}, &ProviderError{Status: res.StatusCode, Body: truncate(string(raw), 300)}
	}
	var out response
	if err := json.Unmarshal(raw, &out); err != nil {
		return "", Usage{}, fmt.Errorf("chat provider: decoding the answer: %w", err)
	}
	if len(out.Choices) == 0 {
		return "", out.Usage, ErrEmpty
	}
	return out.Choices[0].Message.Content, out.Usage, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
