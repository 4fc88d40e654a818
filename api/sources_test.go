package api_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/profiles"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/internal/tdwa"
	"github.com/toolgate/toolgate/jobs"
)

// namedQueries counts the statements of internal/db (their SQL starts with sqlc's
// "-- name:") while on.
type namedQueries struct {
	on atomic.Bool
	n  atomic.Int64
}

func (c *namedQueries) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if c.on.Load() && strings.HasPrefix(data.SQL, "-- name:") {
		c.n.Add(1)
	}
	return ctx
}

func (c *namedQueries) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

type sourceCounts struct {
	Name     string          `json:"name"`
	Tools    int             `json:"tools"`
	Enriched int             `json:"enriched"`
	Embedded int             `json:"embedded"`
	Indexed  int             `json:"indexed"`
	Pending  int             `json:"pending"`
	Fully    bool            `json:"fully_enriched"`
	LastSync json.RawMessage `json:"last_sync"`
}

// TestSourceCounts: GET /v1/sources shows per source how many tools it has, how many are
// enriched for their current definition and how many have a vector in the active profile's
// current set, in one query whatever the number of sources; GET /v1/sources/{name} agrees.
func TestSourceCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var queries namedQueries
	pool, err := postgres.Connect(ctx, pgtest.NewDB(t), postgres.WithQueryTracer(&queries))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(api.Deps{Pool: pool, River: rc, Logger: log, Open: true}))
	t.Cleanup(srv.Close)

	svc := &enrich.Service{Pool: pool, Logger: log, Embedder: embed.NewLocal(384), Enricher: enrich.Heuristic{}, Questions: 2}
	tool := func(name, desc string) catalog.Tool {
		return catalog.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)}
	}
	// importAndEnrich replaces the source's tools and enriches those named in enrichNames.
	importAndEnrich := func(source string, tools []catalog.Tool, enrichNames ...string) {
		t.Helper()
		if _, _, err := sources.Import(ctx, pool, jobs.NewQueue(rc), source, tools); err != nil {
			t.Fatal(err)
		}
		for _, n := range enrichNames {
			stored, err := db.New(pool).GetToolByName(ctx, catalog.Namespaced(source, n))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := svc.EnrichTool(ctx, stored.ID, stored.ContentHash); err != nil {
				t.Fatal(err)
			}
		}
	}
	fin := []catalog.Tool{tool("price", "Current price."), tool("revenue", "Revenue."), tool("margin", "Margin.")}
	importAndEnrich("fin", fin, "price", "revenue")
	importAndEnrich("web", []catalog.Tool{tool("search", "Search."), tool("fetch", "Fetch.")}, "search")
	if _, err := db.New(pool).CreateSource(ctx, db.CreateSourceParams{Name: "idle", Kind: "mcp_http", Config: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}

	list := func() map[string]sourceCounts {
		t.Helper()
		queries.n.Store(0)
		queries.on.Store(true)
		code, body := call(t, srv, "GET", "/v1/sources", "")
		queries.on.Store(false)
		if code != http.StatusOK {
			t.Fatalf("list: %d %v", code, body)
		}
		if n := queries.n.Load(); n != 1 {
			t.Errorf("GET /v1/sources ran %d queries, want 1", n)
		}
		raw, _ := json.Marshal(body["sources"])
		var srcs []sourceCounts
		if err := json.Unmarshal(raw, &srcs); err != nil {
			t.Fatal(err)
		}
		out := map[string]sourceCounts{}
		for _, s := range srcs {
			out[s.Name] = s
			var one sourceCounts
			_, body := call(t, srv, "GET", "/v1/sources/"+s.Name, "")
			raw, _ := json.Marshal(body)
			if err := json.Unmarshal(raw, &one); err != nil || one.Tools != s.Tools || one.Enriched != s.Enriched ||
				one.Embedded != s.Embedded || one.Indexed != s.Indexed || one.Pending != s.Pending || one.Fully != s.Fully ||
				string(one.LastSync) != string(s.LastSync) {
				t.Errorf("GET /v1/sources/%s: %s, in the list: %+v", s.Name, raw, s)
			}
		}
		return out
	}
	want := func(got map[string]sourceCounts, name string, tools, enriched, embedded int) {
		t.Helper()
		if g := got[name]; g.Tools != tools || g.Enriched != enriched || g.Embedded != embedded {
			t.Errorf("%s: tools=%d enriched=%d embedded=%d, want %d %d %d", name, g.Tools, g.Enriched, g.Embedded, tools, enriched, embedded)
		}
	}

	got := list()
	want(got, "fin", 3, 2, 2)
	want(got, "web", 2, 1, 1)
	want(got, "idle", 0, 0, 0)
	if len(got) != 3 || string(got["idle"].LastSync) != "null" || string(got["fin"].LastSync) == "null" {
		t.Fatalf("sources: %+v", got)
	}
	// An enrichment's fields wait in the lexical index's queue (EnrichTool does not flush
	// it) until the next flush: web's import flushed fin's, but web__search's still waits.
	if got["fin"].Indexed != 3 || got["web"].Indexed != 1 {
		t.Errorf("indexed before the flush: fin %d web %d, want 3 1", got["fin"].Indexed, got["web"].Indexed)
	}
	if _, err := lexical.Flush(ctx, pool); err != nil {
		t.Fatal(err)
	}
	got = list()
	if got["fin"].Indexed != 3 || got["web"].Indexed != 2 || got["idle"].Indexed != 0 {
		t.Errorf("indexed after the flush: %+v", got)
	}
	// Each source has one tool not enriched yet: pending, so not fully enriched; a source
	// without tools waits for nothing.
	if g := got["fin"]; g.Pending != 1 || g.Fully {
		t.Errorf("fin: pending %d fully_enriched %v, want 1 false", g.Pending, g.Fully)
	}
	if g := got["web"]; g.Pending != 1 || g.Fully {
		t.Errorf("web: pending %d fully_enriched %v, want 1 false", g.Pending, g.Fully)
	}
	if g := got["idle"]; g.Pending != 0 || !g.Fully {
		t.Errorf("idle: pending %d fully_enriched %v, want 0 true", g.Pending, g.Fully)
	}
	// web's last tool enriched: embedded, yet its enriched fields wait for the lexical
	// index; once flushed the source is fully enriched
	importAndEnrich("web", []catalog.Tool{tool("search", "Search."), tool("fetch", "Fetch.")}, "fetch")
	if g := list()["web"]; g.Pending != 0 || g.Fully {
		t.Errorf("web before the flush: pending %d fully_enriched %v, want 0 false", g.Pending, g.Fully)
	}
	if _, err := lexical.Flush(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if g := list()["web"]; g.Pending != 0 || !g.Fully {
		t.Errorf("web after the flush: pending %d fully_enriched %v, want 0 true", g.Pending, g.Fully)
	}

	// A changed definition is not enriched until its new enrichment has run; its vector
	// (of the old definition) stays in the set meanwhile.
	fin[0].Description = "Current price, delayed 15 minutes."
	importAndEnrich("fin", fin)
	want(list(), "fin", 3, 1, 2)

	// Another active profile counts the vectors of its own current set.
	activate(t, pool, "var-1")
	if _, err := pool.Exec(ctx, `DELETE FROM tool_vectors v USING weight_profiles p, tools t
		WHERE p.name = 'var-1' AND v.set_id = p.current_set AND v.tool_id = t.id AND t.name = 'web__search'`); err != nil {
		t.Fatal(err)
	}
	got = list()
	want(got, "fin", 3, 1, 2)
	want(got, "web", 2, 2, 1)

	// A profile without a vector set: nothing is embedded.
	if _, _, err := profiles.Put(ctx, pool, "fresh", tdwa.Profile{Strategy: tdwa.StrategyMean}, nil); err != nil {
		t.Fatal(err)
	}
	activate(t, pool, "fresh")
	got = list()
	want(got, "fin", 3, 1, 0)
	want(got, "web", 2, 2, 0)
	if g := got["web"]; g.Pending != 2 || g.Fully {
		t.Errorf("web without a vector set: pending %d fully_enriched %v, want 2 false", g.Pending, g.Fully)
	}
}

// activate makes the profile called name the active one.
func activate(t *testing.T, pool *pgxpool.Pool, name string) {
	t.Helper()
	if err := pgx.BeginFunc(context.Background(), pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(context.Background(), `UPDATE weight_profiles SET is_active = false WHERE is_active`); err != nil {
			return err
		}
		_, err := tx.Exec(context.Background(), `UPDATE weight_profiles SET is_active = true WHERE name = $1`, name)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}
