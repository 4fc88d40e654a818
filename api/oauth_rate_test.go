package api_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/oauth"
	"github.com/toolgate/toolgate/internal/pgtest"
)

// TestOAuthSubjectRateLimit: each token subject has TOOLGATE_OAUTH_RATE_PER_MIN requests a
// minute, whatever token of it is used, counted in PostgreSQL as a key's are: past it a
// 429 with Retry-After and the RateLimit headers; another subject keeps its own count.
func TestOAuthSubjectRateLimit(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	// one fixed window: the count cannot restart at a minute's turn during the test
	window := time.Date(2026, 12, 2, 10, 0, 30, 0, time.UTC)
	srv, as, resource := serveWithOAuth(t, api.Deps{Pool: pool, Keys: auth.NewKeys(pool, func() time.Time { return window })},
		oauth.Settings{RatePerMin: 3}, oauthAgent, oauthOps)
	whoami := func(token string) (int, string, string, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+"/v1/whoami", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("RateLimit-Remaining"), resp.Header.Get("Retry-After"), resp.Header.Get("RateLimit-Limit")
	}
	agent := as.ClientToken(t, oauthAgent, resource, "toolgate:search")
	for i := range 3 {
		// a fresh token of the same subject shares its count
		token := agent
		if i == 1 {
			token = as.ClientToken(t, oauthAgent, resource, "toolgate:search")
		}
		if status, remaining, _, limit := whoami(token); status != 200 || remaining != strconv.Itoa(2-i) || limit != "3" {
			t.Fatalf("request %d: %d, remaining %q of %q", i+1, status, remaining, limit)
		}
	}
	if status, remaining, retry, _ := whoami(agent); status != 429 || remaining != "0" || retry != "30" {
		t.Fatalf("fourth request: %d, remaining %q, Retry-After %q; want 429, 0, 30", status, remaining, retry)
	}
	ops := as.ClientToken(t, oauthOps, resource, "toolgate:search")
	if status, remaining, _, _ := whoami(ops); status != 200 || remaining != "2" {
		t.Fatalf("another subject: %d, remaining %q", status, remaining)
	}
}
