// Package provider is the HTTP plumbing shared by the OpenAI-compatible clients (chat
// completions, embeddings and rerank): JSON POSTs with a bearer key, a bound on concurrent
// requests, retries with exponential backoff on 429 and 5xx that honour Retry-After, the
// typed errors callers distinguish, and (with an Observer) a metric and a trace span per
// call.
package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/tracing"
)

// RateLimitedError is a 429 that persisted through every retry.
type RateLimitedError struct {
	URL        string
	RetryAfter time.Duration
}

func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("provider %s: rate limited (429) after all retries", e.URL)
}

// ProviderError is a non-2xx answer (or a transport failure) from the provider.
type ProviderError struct {
	URL    string
	Status int // 0 for a transport failure
	Body   string
	Err    error
}

func (e *ProviderError) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("provider %s: %v", e.URL, e.Err)
	}
	return fmt.Sprintf("provider %s: HTTP %d: %s", e.URL, e.Status, e.Body)
}

func (e *ProviderError) Unwrap() error { return e.Err }

// BadResponseError is a 2xx answer that does not have the expected shape.
type BadResponseError struct {
	URL    string
	Reason string
}

func (e *BadResponseError) Error() string {
	return fmt.Sprintf("provider %s: bad response: %s", e.URL, e.Reason)
}

// Observer records the calls of the clients it is given to: each logical call is a
// "provider <op>" client span on Tracer (with toolgate.attempts and toolgate.tokens
// attributes, and the error as its status) and one toolgate_provider_* observation on
// Metrics. Either field may be nil. One Observer may serve every client of a process.
type Observer struct {
	Metrics *metrics.Metrics
	Tracer  *tracing.Tracer
}

// Config is how a client reaches its provider.
type Config struct {
	BaseURL     string // e.g. https://api.openai.com/v1
	Key         string // bearer token; empty for none
	Timeout     time.Duration
	Concurrency int // requests in flight at once
	Retries     int // extra attempts after the first on 429/5xx/transport errors
	// BaseBackoff is the first retry delay; it doubles each attempt (with jitter), capped at
	// 30s. A Retry-After header overrides it.
	BaseBackoff time.Duration
	HTTPClient  *http.Client
	// Name labels the provider in metrics and spans. Empty means the host (and port) of
	// BaseURL, such as api.openai.com or 127.0.0.1:11434: a label bounded by the
	// configuration, never by what callers send.
	Name string
	// Observer records every call; nil records nothing and costs nothing.
	Observer *Observer
}

// Client posts JSON to one provider.
type Client struct {
	cfg  Config
	name string
	sem  chan struct{}
}

// New returns a client; zero fields get safe defaults.
func New(cfg Config) *Client {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 4
	}
	if cfg.Retries < 0 {
		cfg.Retries = 0
	}
	if cfg.BaseBackoff <= 0 {
		cfg.BaseBackoff = 500 * time.Millisecond
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	name := cfg.Name
	if name == "" {
		if u, err := url.Parse(cfg.BaseURL); err == nil && u.Host != "" {
			name = u.Host
		} else {
			name = "unknown"
		}
	}
	return &Client{cfg: cfg, name: name, sem: make(chan struct{}, cfg.Concurrency)}
}

// Call is one logical request to the provider.
type Call struct {
	// Op names the operation in metrics and spans: embed, chat, rerank.
	Op   string
	Path string // appended to BaseURL
	In   any    // encoded as the JSON body
	Out  any    // the 2xx answer is decoded into it
	// Check, if set, runs once Out is decoded: it returns the tokens the provider reported
	// (counted even when the answer is then rejected, since they were billed) and an error
	// when the answer does not have the expected shape. That error is returned as is,
	// without a retry, and counted as the call's failure.
	Check func() (tokens int, err error)
}

// Do posts call.In to BaseURL+call.Path and decodes the 2xx answer into call.Out, retrying
// transient failures. With an Observer, the logical call (every attempt and backoff) is one
// observation and one span, whatever the number of attempts: a call that fails after all
// retries counts one error.
func (c *Client) Do(ctx context.Context, call Call) error {
	o := c.cfg.Observer
	if o == nil {
		_, _, err := c.do(ctx, call)
		return err
	}
	start := time.Now()
	ctx, span := o.Tracer.ProviderCall(ctx, c.name, call.Op)
	tokens, attempts, err := c.do(ctx, call)
	span.SetAttributes(attribute.Int("toolgate.attempts", attempts), attribute.Int("toolgate.tokens", tokens))
	tracing.End(span, err)
	o.Metrics.ObserveProvider(metrics.ProviderCall{Provider: c.name, Operation: call.Op,
		Duration: time.Since(start), Tokens: tokens, Err: err})
	return err
}

// do runs the attempts of one call; it returns the tokens the answer reported and the
// number of HTTP attempts made.
func (c *Client) do(ctx context.Context, call Call) (tokens, attempts int, err error) {
	body, err := json.Marshal(call.In)
	if err != nil {
		return 0, 0, err
	}
	url := c.cfg.BaseURL + call.Path
	var last error
	for attempt := 0; ; attempt++ {
		wait, err := c.once(ctx, url, body, call.Out)
		if err == nil {
			if call.Check != nil {
				tokens, err = call.Check()
			}
			return tokens, attempt + 1, err
		}
		last = err
		if wait < 0 || attempt >= c.cfg.Retries {
			return 0, attempt + 1, last
		}
		if wait == 0 {
			wait = c.backoff(attempt)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, attempt + 1, errors.Join(ctx.Err(), last)
		case <-t.C:
		}
	}
}

func (c *Client) backoff(attempt int) time.Duration {
	d := c.cfg.BaseBackoff << attempt
	if d > 30*time.Second || d <= 0 {
		d = 30 * time.Second
	}
	// up to 25% jitter so that workers retrying together spread out
	return d + time.Duration(rand.Int64N(int64(d)/4+1))
}

// once makes one attempt. wait < 0 means the error is final; wait == 0 means retry after
// the computed backoff; wait > 0 is the provider's Retry-After.
func (c *Client) once(ctx context.Context, url string, body []byte, out any) (time.Duration, error) {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return -1, ctx.Err()
	}
	defer func() { <-c.sem }()

	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return -1, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.cfg.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.Key)
	}
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled) {
			return -1, err
		}
		return 0, &ProviderError{URL: url, Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return 0, &ProviderError{URL: url, Status: resp.StatusCode, Err: err}
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		ra := retryAfter(resp.Header.Get("Retry-After"))
		return ra, &RateLimitedError{URL: url, RetryAfter: ra}
	case resp.StatusCode >= 500:
		return retryAfter(resp.Header.Get("Retry-After")), &ProviderError{URL: url, Status: resp.StatusCode, Body: snippet(data)}
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return -1, &ProviderError{URL: url, Status: resp.StatusCode, Body: snippet(data)}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return -1, &BadResponseError{URL: url, Reason: "invalid JSON: " + err.Error()}
	}
	return 0, nil
}

// retryAfter parses a Retry-After of delay-seconds or an HTTP date; 0 when absent, capped
// at one minute so a hostile header cannot park a worker.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	var d time.Duration
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		d = time.Duration(s * float64(time.Second))
	} else if t, err := http.ParseTime(v); err == nil {
		d = time.Until(t)
	}
	if d <= 0 {
		return 0
	}
	return min(d, time.Minute)
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
