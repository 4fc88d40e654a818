// Package metrics is toolgate's Prometheus instrumentation: one registry per process
// (no global default registry), the HTTP and job metrics, collectors reading the
// connection pools and River's job table at scrape time, and typed hooks that the search,
// provider and sync code call. Every hook is a no-op on a nil *Metrics, so code under
// test may run without one.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every toolgate metric.
const Namespace = "toolgate"

// Latency buckets in seconds: from 1 ms (a cached lexical search) to 30 s (a long job
// step or a slow provider).
var latencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// Metrics holds the registry and every toolgate metric.
type Metrics struct {
	reg *prometheus.Registry

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec

	jobDuration *prometheus.HistogramVec
	jobWait     *prometheus.HistogramVec
	jobFailures *prometheus.CounterVec

	searchDuration *prometheus.HistogramVec
	searches       *prometheus.CounterVec
	lowConfidence  *prometheus.CounterVec
	findTools      *prometheus.CounterVec
	labels         *prometheus.CounterVec

	providerCalls    *prometheus.CounterVec
	providerErrors   *prometheus.CounterVec
	providerTokens   *prometheus.CounterVec
	providerDuration *prometheus.HistogramVec

	syncRuns  *prometheus.CounterVec
	syncTools *prometheus.CounterVec

	mcpProxyCalls    *prometheus.CounterVec
	mcpProxyDuration *prometheus.HistogramVec
}

// New makes a registry holding the Go runtime and process collectors and toolgate's
// metrics. Pools and the job table are added with WatchPool and WatchJobs.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "http_requests_total",
		Help: "HTTP requests by route template, method and status.",
	}, []string{"route", "method", "status"})
	m.httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "http_request_duration_seconds",
		Help: "HTTP request latency by route template, method and status.", Buckets: latencyBuckets,
	}, []string{"route", "method", "status"})
	m.jobDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "job_duration_seconds",
		Help: "Time spent working one job attempt, by kind and outcome (ok or error).", Buckets: latencyBuckets,
	}, []string{"kind", "outcome"})
	m.jobWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "job_queue_wait_seconds",
		Help: "Time from a job attempt being due (scheduled_at) to a worker starting it, by kind.", Buckets: latencyBuckets,
	}, []string{"kind"})
	m.jobFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "job_failures_total",
		Help: "Job attempts that returned an error or panicked, by kind.",
	}, []string{"kind"})
	m.searchDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "search_duration_seconds",
		Help: "Search latency by mode and branch.", Buckets: latencyBuckets,
	}, []string{"mode", "branch"})
	m.searches = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "searches_total",
		Help: "Searches answered, by endpoint (rest: POST /search, find_tools and use_tool: the MCP meta-tools), mode, the weight profile that served them and result (hits, or zero for none).",
	}, []string{"endpoint", "mode", "profile", "result"})
	m.lowConfidence = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "searches_low_confidence_total",
		Help: "Searches answered with tools but no good match (no_good_match: the answer's confidence below the threshold), by endpoint, mode and the weight profile that served them.",
	}, []string{"endpoint", "mode", "profile"})
	m.findTools = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "mcp_find_tools_calls_total",
		Help: "Calls of the MCP find_tools meta-tool, by outcome (ok, refused: an empty or invalid query or limit, error: the search failed).",
	}, []string{"outcome"})
	m.labels = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "search_labels_total",
		Help: "New labels of searches (a tool the agent used after a search returned it), by label source (call: an MCP call in the same session, feedback: POST /search/{id}/feedback), the tool's source and the profile that served the search.",
	}, []string{"label_source", "source", "profile"})
	m.providerCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "provider_calls_total",
		Help: "Calls to model providers by provider and operation.",
	}, []string{"provider", "operation"})
	m.providerErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "provider_errors_total",
		Help: "Failed calls to model providers by provider and operation.",
	}, []string{"provider", "operation"})
	m.providerTokens = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "provider_tokens_total",
		Help: "Tokens reported by model providers, by provider and operation.",
	}, []string{"provider", "operation"})
	m.providerDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "provider_call_duration_seconds",
		Help: "Latency of calls to model providers by provider and operation.", Buckets: latencyBuckets,
	}, []string{"provider", "operation"})
	m.syncRuns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "sync_runs_total",
		Help: "Finished source syncs by source and result.",
	}, []string{"source", "result"})
	m.syncTools = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "sync_tools_total",
		Help: "Tools changed by syncs, by source and change (added, updated, removed).",
	}, []string{"source", "change"})

	m.mcpProxyCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "mcp_proxy_calls_total",
		Help: "Tool calls the MCP gateway proxied to a source, by source and outcome (ok, tool_error, error, timeout).",
	}, []string{"source", "outcome"})
	m.mcpProxyDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "mcp_proxy_duration_seconds",
		Help: "Latency of tool calls proxied to a source, including the wait for a connection slot, by source.", Buckets: latencyBuckets,
	}, []string{"source"})

	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.httpRequests, m.httpDuration, m.jobDuration, m.jobWait, m.jobFailures, m.searchDuration,
		m.searches, m.lowConfidence, m.findTools, m.labels,
		m.providerCalls, m.providerErrors, m.providerTokens, m.providerDuration,
		m.syncRuns, m.syncTools, m.mcpProxyCalls, m.mcpProxyDuration,
	)
	return m
}

// Registry is the registry every metric is in.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// ObserveHTTP records one served request; route is the route template (/v1/sources/:name).
// A method outside the standard ones is counted as "other": the method is the client's
// choice, and every new label value would be a new series.
func (m *Metrics) ObserveHTTP(route, method string, status int, d time.Duration) {
	if m == nil {
		return
	}
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
	default:
		method = "other"
	}
	s := strconv.Itoa(status)
	m.httpRequests.WithLabelValues(route, method, s).Inc()
	m.httpDuration.WithLabelValues(route, method, s).Observe(d.Seconds())
}

// ObserveSearch records one search: mode is the request's search mode (hybrid, lexical,
// vector), branch the part measured: total, statement (the SQL, both branches in one
// statement) or embed (the query embedding of the vector branch).
func (m *Metrics) ObserveSearch(mode, branch string, d time.Duration) {
	if m == nil {
		return
	}
	m.searchDuration.WithLabelValues(mode, branch).Observe(d.Seconds())
}

// Endpoints a search is answered at.
const (
	EndpointREST      = "rest"       // POST /search
	EndpointFindTools = "find_tools" // the MCP meta-tool
	EndpointUseTool   = "use_tool"   // the MCP meta-tool that searches and calls the best match
)

// ObserveSearchServed counts one answered search: endpoint is one of the Endpoint*
// constants, mode the search mode, profile the weight profile that served it (the requested
// one, the experiment arm's or the active one: a bounded set of names), results how many
// tools it returned and noGoodMatch whether its answer said no tool matched well (a search
// that returned tools and no good match is also counted as of low confidence).
func (m *Metrics) ObserveSearchServed(endpoint, mode, profile string, results int, noGoodMatch bool) {
	if m == nil {
		return
	}
	result := "hits"
	if results == 0 {
		result = "zero"
	}
	m.searches.WithLabelValues(endpoint, mode, profile, result).Inc()
	if results > 0 && noGoodMatch {
		m.lowConfidence.WithLabelValues(endpoint, mode, profile).Inc()
	}
}

// Outcomes of a find_tools call.
const (
	FindToolsOK      = "ok"      // the search answered (with or without tools)
	FindToolsRefused = "refused" // an empty or invalid query or limit: no search ran
	FindToolsError   = "error"   // the search failed
)

// ObserveFindTools counts one find_tools call; outcome is one of the FindTools* constants.
func (m *Metrics) ObserveFindTools(outcome string) {
	if m == nil {
		return
	}
	m.findTools.WithLabelValues(outcome).Inc()
}

// ObserveLabel counts one new label of a search: labelSource is search_labels.label_source
// (call: the MCP session that searched called the tool; feedback: POST
// /search/{id}/feedback), source the tool's source and profile the profile that served the
// search.
func (m *Metrics) ObserveLabel(labelSource, source, profile string) {
	if m == nil {
		return
	}
	m.labels.WithLabelValues(labelSource, source, profile).Inc()
}

// ProviderCall is one finished call to a model provider (an embedding or chat API).
type ProviderCall struct {
	Provider  string // a configured label, by default the provider's host: api.openai.com
	Operation string // embed, chat or rerank
	Duration  time.Duration
	Tokens    int   // tokens the provider reported; 0 if none
	Err       error // nil on success
}

// ObserveProvider records one provider call.
func (m *Metrics) ObserveProvider(c ProviderCall) {
	if m == nil {
		return
	}
	m.providerCalls.WithLabelValues(c.Provider, c.Operation).Inc()
	m.providerDuration.WithLabelValues(c.Provider, c.Operation).Observe(c.Duration.Seconds())
	if c.Err != nil {
		m.providerErrors.WithLabelValues(c.Provider, c.Operation).Inc()
	}
	if c.Tokens > 0 {
		m.providerTokens.WithLabelValues(c.Provider, c.Operation).Add(float64(c.Tokens))
	}
}

// SyncResult is one finished sync of a source.
type SyncResult struct {
	Source                  string
	Result                  string // ok, failed, unchanged, ...
	Added, Updated, Removed int
}

// ObserveSync records one finished sync.
func (m *Metrics) ObserveSync(r SyncResult) {
	if m == nil {
		return
	}
	m.syncRuns.WithLabelValues(r.Source, r.Result).Inc()
	for change, n := range map[string]int{"added": r.Added, "updated": r.Updated, "removed": r.Removed} {
		if n > 0 {
			m.syncTools.WithLabelValues(r.Source, change).Add(float64(n))
		}
	}
}

// Outcomes of a proxied MCP call.
const (
	MCPOK        = "ok"         // the source answered
	MCPToolError = "tool_error" // the source answered with an isError result
	MCPError     = "error"      // the source could not be reached or failed the call
	MCPTimeout   = "timeout"    // the call's deadline passed
)

// ObserveMCPProxy records one tool call proxied to source; outcome is one of the MCP*
// constants.
func (m *Metrics) ObserveMCPProxy(source, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.mcpProxyCalls.WithLabelValues(source, outcome).Inc()
	m.mcpProxyDuration.WithLabelValues(source).Observe(d.Seconds())
}
