package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// answer is the status, error code and Retry-After of one request.
type answer struct {
	status     int
	code       string
	retryAfter string
}

func (a answer) String() string {
	return fmt.Sprintf("%d %q (Retry-After %q)", a.status, a.code, a.retryAfter)
}

// keyed sends a request with key and returns its answer; a request that has no answer
// within a minute (a server waiting for a connection it will not get) is an error.
func keyed(t *testing.T, method, url, key, body string) answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return answer{}
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, url, err)
		return answer{}
	}
	defer resp.Body.Close()
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&e)
	return answer{resp.StatusCode, e.Error.Code, resp.Header.Get("Retry-After")}
}

// nextAnswer is the next answer of answers; none within a minute (requests queued for a
// connection that is never free) fails the test.
func nextAnswer(t *testing.T, answers <-chan answer) answer {
	t.Helper()
	select {
	case a := <-answers:
		return a
	case <-time.After(time.Minute):
		t.Fatal("no answer within a minute")
		return answer{}
	}
}

// heavySearch is the heaviest legal search: eight variants, k = 100, explain.
func heavySearch() string {
	qs := make([]string, 7)
	for i := range qs {
		qs[i] = fmt.Sprintf("%q", strings.Repeat("stock price ", 150))
	}
	return `{"query":"stock price","queries":[` + strings.Join(qs, ",") + `],"k":100,"explain":true,"mode":"lexical"}`
}

// TestKeyFairShare holds every connection of the search pool, as a flood of searches does:
// a key's searches past its share (TOOLGATE_KEY_SEARCH_UNITS) are refused at once with 429
// concurrency_limited and Retry-After instead of queueing for a connection, a heavy search
// takes the whole share, and another key is still authenticated and /readyz still
// answers, on the control pool. Once the connections are free, the held searches answer.
func TestKeyFairShare(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDB(t)
	connect := func(n int) *pgxpool.Pool {
		p, err := postgres.Connect(ctx, url, postgres.WithMaxConns(n))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		return p
	}
	pool, control := connect(2), connect(1)
	testfactory.Catalog(ctx, t, pool, "acme", []catalog.Tool{testfactory.Tool("get_stock_price", "Latest stock price of a ticker")}, nil)
	keys := auth.NewKeys(pool, time.Now)
	_, heavy, err := keys.Create(ctx, auth.Spec{Name: "heavy", Scope: auth.ScopeSearch})
	if err != nil {
		t.Fatal(err)
	}
	_, light, err := keys.Create(ctx, auth.Spec{Name: "light", Scope: auth.ScopeSearch})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	srv := httptest.NewServer(api.New(api.Deps{Pool: pool, ControlPool: control, Logger: log,
		Search: search.New(pool, nil, search.DefaultSettings(), log)}))
	defer srv.Close()

	// Every connection of the search pool is taken.
	var held []*pgxpool.Conn
	for range 2 {
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}

	const plain = `{"query":"stock price","mode":"lexical"}`
	n := api.DefaultKeySearchUnits + 2
	answers := make(chan answer, n)
	for range n {
		go func() { answers <- keyed(t, http.MethodPost, srv.URL+"/search", heavy, plain) }()
	}
	// The searches within the share wait for a connection; the two over it are refused
	// while they wait.
	for range 2 {
		if a := nextAnswer(t, answers); a.status != http.StatusTooManyRequests || a.code != "concurrency_limited" || a.retryAfter != "1" {
			t.Errorf("search over the key's share: %v, want 429 concurrency_limited with Retry-After 1", a)
		}
	}
	if a := keyed(t, http.MethodPost, srv.URL+"/search", heavy, heavySearch()); a.status != http.StatusTooManyRequests {
		t.Errorf("heavy search while the share is taken: %v, want 429", a)
	}
	// Another key is authenticated, and readiness answers, with the search pool taken.
	if a := keyed(t, http.MethodGet, srv.URL+"/v1/whoami", light, ""); a.status != http.StatusOK {
		t.Errorf("whoami of another key while searches hold the pool: %v, want 200", a)
	}
	if a := keyed(t, http.MethodGet, srv.URL+"/readyz", "", ""); a.status != http.StatusOK {
		t.Errorf("/readyz while searches hold the pool: %v, want 200", a)
	}
	if a := keyed(t, http.MethodGet, srv.URL+"/v1/whoami", "tg_aaaaaaaaaa_wrong", ""); a.status != http.StatusUnauthorized {
		t.Errorf("a wrong key while searches hold the pool: %v, want 401", a)
	}

	for _, c := range held {
		c.Release()
	}
	for range n - 2 {
		if a := nextAnswer(t, answers); a.status != http.StatusOK {
			t.Errorf("search within the key's share: %v, want 200", a)
		}
	}
	// The share is free again: a heavy search takes all of it, alone.
	if a := keyed(t, http.MethodPost, srv.URL+"/search", heavy, heavySearch()); a.status != http.StatusOK {
		t.Errorf("heavy search alone: %v, want 200", a)
	}
}
