package gateway_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/experiments"
	"github.com/toolgate/toolgate/internal/gateway"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// TestFindToolsExperimentArmPerSession: while an A/B experiment runs, every find_tools of an
// MCP session is served by the arm its session id predicts, and a call label of the session
// counts in that arm's comparison.
func TestFindToolsExperimentArmPerSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := setup(t, gateway.Options{})
	var ids []int64
	rows, err := e.pool.Query(ctx, `SELECT id FROM tools ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil || len(ids) == 0 {
		t.Fatalf("tools: %v %v", ids, err)
	}
	// Enriched and embedded: every built-in profile gets its vectors.
	testfactory.Enrich(ctx, t, testfactory.LocalEnricher(e.pool, 1), ids...)
	log := slog.New(slog.DiscardHandler)
	g := gateway.New(e.pool, gateway.SearchFinder{Search: search.New(e.pool, embed.NewLocal(384), search.DefaultSettings(), log)},
		gateway.Options{Backends: gateway.Backends{Lexical: true, Vector: true, Enricher: "none", Reranker: "none"}})
	t.Cleanup(g.Close)
	exp, err := experiments.Start(ctx, e.pool, experiments.Definition{Name: "mcp", Candidate: "var-1", Share: 0.5})
	if err != nil {
		t.Fatal(err)
	}

	caller := &auth.Caller{Name: "agent", KeyID: 7, Scope: auth.ScopeSearch}
	srv := serveGateway(t, g.HTTPHandler(), caller)
	labelledArm := ""
	for range 6 {
		c := connectHTTP(t, srv.URL)
		var last findOutput
		for _, q := range []string{"send an email message", "stock price", "email"} {
			last = find(t, c, q, 3)
		}
		want := experiments.ArmOf(exp, experiments.UnitValue(exp.Unit, c.ID(), caller.KeyID, caller.Name))
		var arms []string
		var n int
		if err := e.pool.QueryRow(ctx, `SELECT array_agg(DISTINCT coalesce(arm, '<none>')), count(*) FROM search_log WHERE session_id = $1`,
			c.ID()).Scan(&arms, &n); err != nil {
			t.Fatal(err)
		}
		if n != 3 || len(arms) != 1 || arms[0] != string(want) {
			t.Fatalf("session %s: %d searches in arms %v, want 3 in %s", c.ID(), n, arms, want)
		}
		if labelledArm == "" && rankOf(last, "market__send_email") > 0 {
			waitChanged(t, c)
			if res := call(t, c, "market__send_email", map[string]any{"to": "a@b.c", "body": "hi"}); res.IsError {
				t.Fatalf("bound call failed: %s", text(res))
			}
			g.WaitLabels()
			labelledArm = string(want)
		}
	}
	if labelledArm == "" {
		t.Fatal("no session was given market__send_email: nothing labelled")
	}
	rep, err := experiments.Get(ctx, e.pool, "mcp")
	if err != nil {
		t.Fatal(err)
	}
	var units, searches, labelled int64
	for _, a := range rep.Arms {
		units, searches = units+a.Units, searches+a.Searches
		labelled += a.Labelled
		if a.Labelled > 0 && string(a.Arm) != labelledArm {
			t.Errorf("the label counts in arm %s, want %s", a.Arm, labelledArm)
		}
	}
	if units != 6 || searches != 18 || labelled != 1 {
		t.Errorf("report %+v: want 6 sessions, 18 searches, 1 labelled", rep.Arms)
	}
}
