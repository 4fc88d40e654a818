package metrics_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/metrics"
)

// dashboard is the part of a Grafana dashboard the check reads.
type dashboard struct {
	Title         string `json:"title"`
	UID           string `json:"uid"`
	SchemaVersion int    `json:"schemaVersion"`
	Templating    struct {
		List []struct{ Name, Type, Query string } `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID         int                `json:"id"`
		Type       string             `json:"type"`
		Title      string             `json:"title"`
		Datasource map[string]string  `json:"datasource"`
		GridPos    map[string]float64 `json:"gridPos"`
		Targets    []struct {
			RefID string `json:"refId"`
			Expr  string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

var metricName = regexp.MustCompile(`\b` + metrics.Namespace + `_[a-zA-Z0-9_]+`)

// TestRetrievalDashboard: docs/grafana/toolgate-retrieval.json is a Grafana dashboard whose
// panels query the Prometheus data source it declares, and every metric its PromQL names is
// one the registry serves, of a type the query can read (a histogram through its _bucket,
// _sum or _count series).
func TestRetrievalDashboard(t *testing.T) {
	raw, err := os.ReadFile("../../docs/grafana/toolgate-retrieval.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if d.Title == "" || d.UID == "" || d.SchemaVersion == 0 || len(d.Panels) == 0 {
		t.Fatalf("not a dashboard: title %q uid %q schemaVersion %d, %d panels", d.Title, d.UID, d.SchemaVersion, len(d.Panels))
	}
	if len(d.Templating.List) != 1 || d.Templating.List[0].Type != "datasource" || d.Templating.List[0].Query != "prometheus" {
		t.Errorf("templating %+v: want one Prometheus data source variable", d.Templating.List)
	}
	source := "${" + d.Templating.List[0].Name + "}"

	// Every hook once, so that every family has a series to gather.
	m := metrics.New()
	m.ObserveHTTP("/search", "POST", 200, time.Millisecond)
	m.ObserveSearch("hybrid", "total", time.Millisecond)
	m.ObserveSearchServed(metrics.EndpointREST, "hybrid", "default", 1, true)
	m.ObserveFindTools(metrics.FindToolsOK)
	m.ObserveLabel("call", "src", "default")
	m.ObserveProvider(metrics.ProviderCall{Provider: "p", Operation: "embed", Tokens: 1, Err: os.ErrClosed})
	m.ObserveSync(metrics.SyncResult{Source: "src", Result: "ok", Added: 1})
	m.ObserveMCPProxy("src", metrics.MCPOK, time.Millisecond)
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]string{} // name → COUNTER, HISTOGRAM, ...
	for _, f := range families {
		served[f.GetName()] = f.GetType().String()
	}

	ids := map[int]bool{}
	used := map[string]bool{}
	for _, p := range d.Panels {
		if p.Title == "" || p.Type == "" || ids[p.ID] || p.GridPos["w"] == 0 || p.GridPos["h"] == 0 || len(p.Targets) == 0 {
			t.Errorf("panel %d %q: needs a unique id, a type, a title, a size and targets", p.ID, p.Title)
		}
		ids[p.ID] = true
		if p.Datasource["type"] != "prometheus" || p.Datasource["uid"] != source {
			t.Errorf("panel %q: data source %v, want the dashboard's %s", p.Title, p.Datasource, source)
		}
		for _, tg := range p.Targets {
			names := metricName.FindAllString(tg.Expr, -1)
			if tg.RefID == "" || len(names) == 0 {
				t.Errorf("panel %q: target %+v needs a refId and a toolgate metric", p.Title, tg)
			}
			for _, n := range names {
				used[n] = true
				if typ, ok := served[n]; ok {
					if typ != "COUNTER" {
						t.Errorf("panel %q: %s is a %s, not a counter", p.Title, n, typ)
					}
					continue
				}
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")
				if served[base] != "HISTOGRAM" {
					t.Errorf("panel %q: %s is not a metric of the registry", p.Title, n)
				}
			}
		}
	}
	for _, want := range []string{"toolgate_searches_total", "toolgate_search_labels_total", "toolgate_mcp_find_tools_calls_total", "toolgate_search_duration_seconds_bucket"} {
		if !used[want] {
			t.Errorf("no panel reads %s", want)
		}
	}
}
