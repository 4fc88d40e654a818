package chat

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestOpenAIComplete(t *testing.T) {
	var got map[string]any
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		auth = r.Header.Get("Authorization")
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &got)
		io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"{\"ok\":true}"}}],"usage":{"prompt_tokens":12,"completion_tokens":3}}`)
	}))
	defer srv.Close()
	c := &OpenAI{BaseURL: srv.URL + "/v1/", Key: "sk-1", Model: "m1"}
	out, usage, err := c.Complete(context.Background(), "sys", "hello", true)
	if err != nil {
		t.Fatal(err)
	}
	if out != `{"ok":true}` || usage != (Usage{PromptTokens: 12, CompletionTokens: 3}) || auth != "Bearer sk-1" {
		t.Errorf("out %q usage %+v auth %q", out, usage, auth)
	}
	msgs, _ := got["messages"].([]any)
	rf, _ := got["response_format"].(map[string]any)
	if got["model"] != "m1" || len(msgs) != 2 || rf["type"] != "json_object" {
		t.Errorf("request %v", got)
	}
	got = nil
	if _, _, err := c.Complete(context.Background(), "sys", "hello", false); err != nil {
		t.Fatal(err)
	}
	if _, ok := got["response_format"]; ok {
		t.Errorf("response_format sent without JSON mode: %v", got)
	}
}

func TestOpenAIErrors(t *testing.T) {
	status, body := 0, ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	defer srv.Close()
	c := &OpenAI{BaseURL: srv.URL, Model: "m"}

	status, body = http.StatusServiceUnavailable, "overloaded"
	_, _, err := c.Complete(context.Background(), "s", "u", true)
	var pe *ProviderError
	if !errors.As(err, &pe) || pe.Status != 503 || pe.Body != "overloaded" {
		t.Errorf("503: err = %v", err)
	}
	status, body = http.StatusOK, `{"choices":[]}`
	if _, _, err := c.Complete(context.Background(), "s", "u", true); !errors.Is(err, ErrEmpty) {
		t.Errorf("no choices: err = %v", err)
	}
	status, body = http.StatusOK, `<html>`
	if _, _, err := c.Complete(context.Background(), "s", "u", true); err == nil || errors.As(err, &pe) {
		t.Errorf("not JSON: err = %v", err)
	}
}
