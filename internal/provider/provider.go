// Package provider is the HTTP plumbing shared by the OpenAI-compatible clients (chat
// completions and embeddings): JSON POSTs with a bearer key, a bound on concurrent requests,
// retries with exponential backoff on 429 and 5xx that honour Retry-After, and the typed
// errors callers distinguish.
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
	"strconv"
	"strings"
	"time"
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
}

// Client posts JSON to one provider.
type Client struct {
	cfg Config
	sem chan struct{}
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
	return &Client{cfg: cfg, sem: make(chan struct{}, cfg.Concurrency)}
}

// PostJSON posts in to BaseURL+path and decodes the 2xx answer into out, retrying
// transient failures.
func (c *Client) PostJSON(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	url := c.cfg.BaseURL + path
	var last error
	for attempt := 0; ; attempt++ {
		wait, err := c.once(ctx, url, body, out)
		if err == nil {
			return nil
		}
		last = err
		if wait < 0 || attempt >= c.cfg.Retries {
			return last
		}
		if wait == 0 {
			wait = c.backoff(attempt)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(ctx.Err(), last)
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
