package provider

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestDoRetries(t *testing.T) {
	cases := []struct {
		name     string
		statuses []int // answers before a 200
		retries  int
		calls    int64
		check    func(error) bool
	}{
		{"429 then ok", []int{429}, 3, 2, func(err error) bool { return err == nil }},
		{"503 twice then ok", []int{503, 503}, 3, 3, func(err error) bool { return err == nil }},
		{"429 exhausted", []int{429, 429, 429}, 2, 3, func(err error) bool { var e *RateLimitedError; return errors.As(err, &e) }},
		{"500 exhausted", []int{500, 500, 500, 500}, 1, 2, func(err error) bool { var e *ProviderError; return errors.As(err, &e) && e.Status == 500 }},
		{"400 not retried", []int{400}, 5, 1, func(err error) bool { var e *ProviderError; return errors.As(err, &e) && e.Status == 400 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var calls atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := calls.Add(1)
				if r.Header.Get("Authorization") != "Bearer k" {
					w.WriteHeader(401)
					return
				}
				if int(n) <= len(c.statuses) {
					w.Header().Set("Retry-After", "0")
					w.WriteHeader(c.statuses[n-1])
					return
				}
				_, _ = w.Write([]byte(`{"ok":true}`))
			}))
			defer srv.Close()
			cl := New(Config{BaseURL: srv.URL, Key: "k", Retries: c.retries, BaseBackoff: time.Millisecond})
			var out struct{ OK bool }
			err := cl.Do(context.Background(), Call{Op: "x", Path: "/x", In: map[string]int{"a": 1}, Out: &out})
			if !c.check(err) || calls.Load() != c.calls {
				t.Fatalf("err %v, calls %d (want %d)", err, calls.Load(), c.calls)
			}
			if err == nil && !out.OK {
				t.Fatal("body not decoded")
			}
		})
	}
}

func TestBadJSONIsBadResponse(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(`{"ok":`)) }))
	defer srv.Close()
	var out map[string]any
	err := New(Config{BaseURL: srv.URL, Retries: 3}).Do(context.Background(), Call{Path: "/x", Out: &out})
	var br *BadResponseError
	if !errors.As(err, &br) {
		t.Fatalf("want BadResponseError, got %v", err)
	}
}

func TestRetryAfter(t *testing.T) {
	if d := retryAfter("2"); d != 2*time.Second {
		t.Fatalf("got %v", d)
	}
	if d := retryAfter("3600"); d != time.Minute {
		t.Fatalf("not capped: %v", d)
	}
	if d := retryAfter(time.Now().Add(10 * time.Second).UTC().Format(http.TimeFormat)); d <= 5*time.Second || d > 10*time.Second {
		t.Fatalf("http date: %v", d)
	}
	if d := retryAfter("soon"); d != 0 {
		t.Fatalf("garbage: %v", d)
	}
}
