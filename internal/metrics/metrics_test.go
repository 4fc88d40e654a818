package metrics_test

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/metrics"
)

func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

func TestHooks(t *testing.T) {
	m := metrics.New()
	m.ObserveSearch("hybrid", "total", 12*time.Millisecond)
	m.ObserveSearch("hybrid", "total", 30*time.Millisecond)
	m.ObserveSearch("lexical", "lexical", time.Millisecond)
	m.ObserveProvider(metrics.ProviderCall{Provider: "openai", Operation: "embed", Duration: time.Second, Tokens: 120})
	m.ObserveProvider(metrics.ProviderCall{Provider: "openai", Operation: "embed", Duration: time.Second, Err: errors.New("429")})
	m.ObserveSync(metrics.SyncResult{Source: "github", Result: "ok", Added: 3, Removed: 1})
	m.ObserveSync(metrics.SyncResult{Source: "github", Result: "failed"})
	m.ObserveHTTP("/v1/search", "POST", 200, 5*time.Millisecond)
	m.ObserveMCPProxy("github", metrics.MCPOK, 40*time.Millisecond)
	m.ObserveMCPProxy("github", metrics.MCPTimeout, 30*time.Second)
	m.ObserveSearchServed(metrics.EndpointREST, "hybrid", "default", 5, false)
	m.ObserveSearchServed(metrics.EndpointREST, "hybrid", "default", 0, true)
	m.ObserveSearchServed(metrics.EndpointFindTools, "hybrid", "candidate", 3, false)
	m.ObserveFindTools(metrics.FindToolsOK)
	m.ObserveFindTools(metrics.FindToolsRefused)
	m.ObserveLabel("call", "github", "candidate")
	m.ObserveLabel("feedback", "github", "default")

	out := scrape(t, m)
	for _, want := range []string{
		`toolgate_search_duration_seconds_count{branch="total",mode="hybrid"} 2`,
		`toolgate_search_duration_seconds_bucket{branch="total",mode="hybrid",le="0.025"} 1`,
		`toolgate_search_duration_seconds_count{branch="lexical",mode="lexical"} 1`,
		`toolgate_provider_calls_total{operation="embed",provider="openai"} 2`,
		`toolgate_provider_errors_total{operation="embed",provider="openai"} 1`,
		`toolgate_provider_tokens_total{operation="embed",provider="openai"} 120`,
		`toolgate_provider_call_duration_seconds_count{operation="embed",provider="openai"} 2`,
		`toolgate_sync_runs_total{result="ok",source="github"} 1`,
		`toolgate_sync_runs_total{result="failed",source="github"} 1`,
		`toolgate_sync_tools_total{change="added",source="github"} 3`,
		`toolgate_sync_tools_total{change="removed",source="github"} 1`,
		`toolgate_http_requests_total{method="POST",route="/v1/search",status="200"} 1`,
		`toolgate_mcp_proxy_calls_total{outcome="ok",source="github"} 1`,
		`toolgate_mcp_proxy_calls_total{outcome="timeout",source="github"} 1`,
		`toolgate_mcp_proxy_duration_seconds_count{source="github"} 2`,
		`toolgate_searches_total{endpoint="rest",mode="hybrid",profile="default",result="hits"} 1`,
		`toolgate_searches_total{endpoint="rest",mode="hybrid",profile="default",result="zero"} 1`,
		`toolgate_searches_total{endpoint="find_tools",mode="hybrid",profile="candidate",result="hits"} 1`,
		`toolgate_mcp_find_tools_calls_total{outcome="ok"} 1`,
		`toolgate_mcp_find_tools_calls_total{outcome="refused"} 1`,
		`toolgate_search_labels_total{label_source="call",profile="candidate",source="github"} 1`,
		`toolgate_search_labels_total{label_source="feedback",profile="default",source="github"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s", want)
		}
	}
	if strings.Contains(out, `change="updated"`) {
		t.Error("a zero count created a series")
	}
}

// TestLowConfidenceSearches: a search that returned tools with no good match counts in
// searches_low_confidence_total as well as in searches_total; one that found nothing (no
// good match, by definition) and one of good confidence do not.
func TestLowConfidenceSearches(t *testing.T) {
	m := metrics.New()
	m.ObserveSearchServed(metrics.EndpointFindTools, "hybrid", "default", 5, true)
	m.ObserveSearchServed(metrics.EndpointFindTools, "hybrid", "default", 5, true)
	m.ObserveSearchServed(metrics.EndpointFindTools, "hybrid", "default", 5, false)
	m.ObserveSearchServed(metrics.EndpointREST, "hybrid", "default", 0, true)
	out := scrape(t, m)
	for _, want := range []string{
		`toolgate_searches_low_confidence_total{endpoint="find_tools",mode="hybrid",profile="default"} 2` + "\n",
		`toolgate_searches_total{endpoint="find_tools",mode="hybrid",profile="default",result="hits"} 3` + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s", want)
		}
	}
	if strings.Contains(out, `toolgate_searches_low_confidence_total{endpoint="rest"`) {
		t.Error("a search that found nothing counted as of low confidence")
	}
}

func TestRegistriesAreIndependent(t *testing.T) {
	a, b := metrics.New(), metrics.New()
	a.ObserveSearch("hybrid", "total", time.Millisecond)
	if strings.Contains(scrape(t, b), "toolgate_search_duration_seconds_count") {
		t.Fatal("an observation on one registry shows in another")
	}
}

func TestNilMetricsIsNoop(t *testing.T) {
	var m *metrics.Metrics
	m.ObserveSearch("hybrid", "total", time.Millisecond)
	m.ObserveProvider(metrics.ProviderCall{Provider: "p", Operation: "o"})
	m.ObserveSync(metrics.SyncResult{Source: "s", Result: "ok"})
	m.ObserveHTTP("/", "GET", 200, 0)
	m.ObserveMCPProxy("s", metrics.MCPOK, 0)
	m.ObserveSearchServed(metrics.EndpointREST, "hybrid", "default", 1, true)
	m.ObserveFindTools(metrics.FindToolsOK)
	m.ObserveLabel("call", "s", "default")
	if len(m.JobMiddlewares()) != 0 {
		t.Fatal("a nil registry installs job middleware")
	}
}

// TestWatchSeveralPools: the primary and a read replica are watched side by side (a second
// WatchPool used to panic on a duplicate collector).
func TestWatchSeveralPools(t *testing.T) {
	m := metrics.New()
	for _, name := range []string{"primary", "replica"} {
		pool, err := pgxpool.New(context.Background(), "postgres://nobody@127.0.0.1:1/none?pool_max_conns=3")
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		m.WatchPool(name, pool)
	}
	out := scrape(t, m)
	for _, want := range []string{`toolgate_db_pool_max_conns{pool="primary"} 3`, `toolgate_db_pool_max_conns{pool="replica"} 3`} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s", want)
		}
	}
}
