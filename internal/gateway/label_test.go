package gateway_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/gateway"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/mcptest"
	"github.com/toolgate/toolgate/internal/observed"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
)

// labels returns every search_labels row, by search (the oldest first: ids have no order)
// and rank.
func labels(t testing.TB, pool *pgxpool.Pool) []db.SearchLabel {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT search_id FROM search_labels GROUP BY 1 ORDER BY min(search_created_at), 1`)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var out []db.SearchLabel
	for _, id := range ids {
		ls, err := db.New(pool).ListSearchLabels(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ls...)
	}
	return out
}

// rankOf is the 1-based position of name in a find_tools answer, 0 when absent.
func rankOf(out findOutput, name string) int {
	for i, tl := range out.Tools {
		if tl.Name == name {
			return i + 1
		}
	}
	return 0
}

// TestCallLabelsTheSearch: a session finds tools, then calls one it was given (as a bound
// tool, then through call_tool after a second find): each call labels the session's latest
// search that returned the tool, with the tool's rank there, the delay and the outcome.
func TestCallLabelsTheSearch(t *testing.T) {
	t.Parallel()
	e := setup(t, gateway.Options{CallTool: true})
	caller := &auth.Caller{Name: "agent", KeyID: 7, Scope: auth.ScopeSearch}
	c := connectHTTP(t, serveGateway(t, e.g.HTTPHandler(), caller).URL)

	first := find(t, c, "send an email message or get a stock price", 3)
	rank := rankOf(first, "market__send_email")
	if rank < 2 {
		t.Fatalf("want market__send_email returned below the top, got %+v", first.Tools)
	}
	waitChanged(t, c)
	if res := call(t, c, "market__send_email", map[string]any{"to": "a@b.c", "body": "hi"}); res.IsError {
		t.Fatalf("bound call failed: %s", text(res))
	}
	e.g.WaitLabels()
	got := labels(t, e.pool)
	if len(got) != 1 {
		t.Fatalf("labels after one call: %+v, want one", got)
	}
	l := got[0]
	if l.SearchID != first.SearchID || l.ToolName != "market__send_email" || l.LabelSource != db.LabelCall ||
		int(l.Rank) != rank || l.DelayMs < 0 || l.DelayMs > 60_000 || deref(l.ToolSource) != "market" ||
		!l.Success.Valid || !l.Success.Bool {
		t.Fatalf("label %+v, want search %d, market__send_email, rank %d, call, success", l, first.SearchID, rank)
	}

	// A second search that also returns the tool: a call through call_tool labels it, the
	// most recent one, not the first search again.
	second := find(t, c, "email", 2)
	rank2 := rankOf(second, "market__send_email")
	if rank2 == 0 {
		t.Fatalf("second search did not return market__send_email: %+v", second.Tools)
	}
	// invalid arguments: the agent chose the tool all the same, the call did not work
	wantToolError(t, call(t, c, "call_tool", map[string]any{"name": "market__send_email", "arguments": map[string]any{"to": "x"}}), gateway.CodeInvalidArguments)
	e.g.WaitLabels()
	got = labels(t, e.pool)
	if len(got) != 2 || got[1].SearchID != second.SearchID || int(got[1].Rank) != rank2 || got[1].Success.Bool {
		t.Fatalf("labels %+v, want the first plus search %d at rank %d, unsuccessful", got, second.SearchID, rank2)
	}
	// a later successful call of the same tool after the same search marks it successful
	call(t, c, "call_tool", map[string]any{"name": "market__send_email", "arguments": map[string]any{"to": "x", "body": "y"}})
	e.g.WaitLabels()
	got = labels(t, e.pool)
	if len(got) != 2 || !got[1].Success.Bool {
		t.Fatalf("labels %+v, want the second one successful now", got)
	}

	// the view: both searches labelled, by calls
	var searches, labelled, nlabels int64
	var rate float64
	err := e.pool.QueryRow(context.Background(), `SELECT searches, labelled, label_rate, labels FROM search_label_stats
		WHERE profile = 'default' AND label_source = 'call'`).Scan(&searches, &labelled, &rate, &nlabels)
	if err != nil || searches != 2 || labelled != 2 || rate != 1 || nlabels != 2 {
		t.Fatalf("search_label_stats: %v searches %d labelled %d rate %v labels %d", err, searches, labelled, rate, nlabels)
	}
}

// TestCallsThatLabelNothing: a tool the session's searches did not return, a call made in
// another session, a call after the window, a search made by another caller under the
// session's id, and use_tool (the search picked the tool, not the agent) label nothing.
func TestCallsThatLabelNothing(t *testing.T) {
	t.Parallel()
	e := setup(t, gateway.Options{CallTool: true, UseTool: true})
	caller := &auth.Caller{Name: "agent", KeyID: 7, Scope: auth.ScopeSearch}
	url := serveGateway(t, e.g.HTTPHandler(), caller).URL
	c := connectHTTP(t, url)
	other := connectHTTP(t, url)

	out := find(t, c, "stock price of a company", 1)
	if len(out.Tools) != 1 || out.Tools[0].Name != "market__get_stock_price" {
		t.Fatalf("find_tools: %+v", out.Tools)
	}
	// not returned by the session's search (a catalog tool called by name)
	if res := call(t, c, "market__send_email", map[string]any{"to": "a", "body": "b"}); res.IsError {
		t.Fatalf("unlisted call: %s", text(res))
	}
	// returned, but to another session (same key)
	if res := call(t, other, "call_tool", map[string]any{"name": "market__get_stock_price", "arguments": map[string]any{"symbol": "X"}}); res.IsError {
		t.Fatalf("other session's call: %s", text(res))
	}
	// use_tool: the search's own pick
	if res := call(t, other, "use_tool", map[string]any{"query": "stock price of a company", "params": map[string]any{"symbol": "X"}}); res.IsError {
		t.Fatalf("use_tool: %s", text(res))
	}
	// an unknown tool
	wantToolError(t, call(t, c, "call_tool", map[string]any{"name": "nope__tool"}), gateway.CodeUnknownTool)

	// A search made by another key that claims this session's id (POST /search takes any
	// session_id) returning send_email: the session's call must not label it.
	svc := search.New(e.pool, nil, search.DefaultSettings(), slog.New(slog.DiscardHandler))
	resp, err := svc.Search(context.Background(), auth.Caller{Name: "agent", KeyID: 8, Scope: auth.ScopeSearch}, search.Request{Query: "send an email message", K: 3, SessionID: c.ID()})
	if err != nil || len(resp.Results) == 0 {
		t.Fatalf("foreign search: %v %+v", err, resp)
	}
	if res := call(t, c, "market__send_email", map[string]any{"to": "a", "body": "b"}); res.IsError {
		t.Fatalf("call: %s", text(res))
	}
	e.g.WaitLabels()
	if got := labels(t, e.pool); len(got) != 0 {
		t.Fatalf("labels %+v, want none", got)
	}

	// After the window: a search a minute old is outside a gateway's one-second window, so
	// the call records nothing; the same calls through a gateway whose window is an hour
	// record the label (the window, not something else, said no). The search is made a
	// minute old in the log rather than waited for, and the margins (a minute against a
	// second, an hour against the test's run) are far beyond the delay between the call and
	// its label's statement, which a loaded machine stretches to tens of milliseconds (a
	// one-microsecond window was once met by a search made milliseconds before the call).
	short := newGateway(t, e.pool, gateway.Options{CallTool: true, LabelWindow: time.Second})
	late := connectHTTP(t, serveGateway(t, short.HTTPHandler(), caller).URL)
	old := find(t, late, "stock price of a company", 1)
	// the month's partition may start less than a minute ago: the previous one must exist
	if _, err := e.pool.Exec(context.Background(), `DO $$
		DECLARE m date := (date_trunc('month', now()) - interval '1 month')::date;
		BEGIN
			IF to_regclass(format('search_log_%s', to_char(m, 'YYYYMM'))) IS NULL THEN
				EXECUTE format('CREATE TABLE %I PARTITION OF search_log FOR VALUES FROM (%L) TO (%L)',
				               format('search_log_%s', to_char(m, 'YYYYMM')), m, (m + interval '1 month')::date);
			END IF;
		END $$`); err != nil {
		t.Fatal(err)
	}
	if _, err := e.pool.Exec(context.Background(), `UPDATE search_log SET created_at = created_at - interval '1 minute' WHERE id = $1`, old.SearchID); err != nil {
		t.Fatal(err)
	}
	call(t, late, "call_tool", map[string]any{"name": "market__get_stock_price", "arguments": map[string]any{"symbol": "X"}})
	short.WaitLabels()
	if got := labels(t, e.pool); len(got) != 0 {
		t.Fatalf("labels %+v after the window, want none", got)
	}
	long := newGateway(t, e.pool, gateway.Options{CallTool: true, LabelWindow: time.Hour})
	inside := connectHTTP(t, serveGateway(t, long.HTTPHandler(), caller).URL)
	out = find(t, inside, "stock price of a company", 1)
	call(t, inside, "call_tool", map[string]any{"name": "market__get_stock_price", "arguments": map[string]any{"symbol": "X"}})
	long.WaitLabels()
	if got := labels(t, e.pool); len(got) != 1 || got[0].SearchID != out.SearchID || got[0].Rank != 1 {
		t.Fatalf("labels %+v within the window, want search %d rank 1", got, out.SearchID)
	}
}

// TestFeedbackIsALabel: POST /search/{id}/feedback (search.Service.RecordFeedback) writes
// a label of source feedback, with the tool's rank, beside the call label of the same search.
func TestFeedbackIsALabel(t *testing.T) {
	t.Parallel()
	e := setup(t, gateway.Options{CallTool: true})
	caller := &auth.Caller{Name: "agent", KeyID: 7, Scope: auth.ScopeSearch}
	c := connectHTTP(t, serveGateway(t, e.g.HTTPHandler(), caller).URL)
	out := find(t, c, "send an email message or get a stock price", 3)
	rank := rankOf(out, "market__send_email")
	call(t, c, "call_tool", map[string]any{"name": "market__send_email", "arguments": map[string]any{"to": "a", "body": "b"}})
	e.g.WaitLabels()

	svc := search.New(e.pool, nil, search.DefaultSettings(), slog.New(slog.DiscardHandler))
	no := false
	if _, err := svc.RecordFeedback(context.Background(), *caller, out.SearchID,
		[]search.Feedback{{Name: "market__send_email", Success: &no}}); err != nil {
		t.Fatal(err)
	}
	got := labels(t, e.pool)
	if len(got) != 2 || got[0].LabelSource != db.LabelCall || got[1].LabelSource != db.LabelFeedback ||
		int(got[1].Rank) != rank || got[1].Success.Bool || deref(got[1].ToolSource) != "market" {
		t.Fatalf("labels %+v, want a call and a feedback label at rank %d", got, rank)
	}
	var sources int
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM search_label_stats WHERE labelled = 1`).Scan(&sources); err != nil || sources != 3 {
		t.Fatalf("search_label_stats rows call, feedback and any: %d %v", sources, err)
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// TestLabelsFromServerEverything drives real traffic: a source that is the reference MCP
// server over stdio, its tools as it lists them, two sessions that find and call its
// tools (by name and through call_tool) or only search; the calls are labelled.
func TestLabelsFromServerEverything(t *testing.T) {
	t.Parallel()
	path := mcptest.EverythingServer(t)
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	cmd := []string{"node", path, "stdio"}
	config := map[string]any{"command": "node", "args": cmd[1:]}
	raw, _ := json.Marshal(config)
	policy := mcpclient.NewCommandPolicy([][]string{cmd})
	up, err := gateway.Connect(ctx, "mcp_stdio", raw, mcpclient.Options{Commands: policy})
	if err != nil {
		t.Fatal(err)
	}
	listed, err := up.ClientSession.ListTools(ctx, nil)
	_ = up.Close()
	if err != nil {
		t.Fatal(err)
	}
	var tools []catalog.Tool
	for _, tl := range listed.Tools {
		schema, _ := json.Marshal(tl.InputSchema)
		tools = append(tools, catalog.Tool{Name: tl.Name, Description: tl.Description, InputSchema: schema})
	}
	addSource(t, pool, "everything", "mcp_stdio", config, tools)

	g := newGateway(t, pool, gateway.Options{CallTool: true, Commands: policy})
	url := serveGateway(t, g.HTTPHandler(), &auth.Caller{Name: "agent", KeyID: 7, Scope: auth.ScopeSearch}).URL
	a, b := connectHTTP(t, url), connectHTTP(t, url)

	want := map[int64]int{} // search id → rank of the tool called after it
	echo := find(t, a, "echo back a message", 5)
	if want[echo.SearchID] = rankOf(echo, "everything__echo"); want[echo.SearchID] == 0 {
		t.Fatalf("echo not found: %+v", echo.Tools)
	}
	if res := call(t, a, "everything__echo", map[string]any{"message": "hi"}); res.IsError {
		t.Fatalf("echo: %s", text(res))
	}
	sum := find(t, a, "add two numbers", 5)
	if want[sum.SearchID] = rankOf(sum, "everything__get-sum"); want[sum.SearchID] == 0 {
		t.Fatalf("get-sum not found: %+v", sum.Tools)
	}
	if res := call(t, a, "call_tool", map[string]any{"name": "everything__get-sum", "arguments": map[string]any{"a": 1, "b": 2}}); res.IsError {
		t.Fatalf("get-sum: %s", text(res))
	}
	find(t, b, "tiny image", 3)                   // searched, nothing called
	unused := find(t, b, "structured content", 3) // searched; the call below is of a tool it did not return
	if rankOf(unused, "everything__echo") != 0 {
		t.Fatalf("want a search that does not return echo: %+v", unused.Tools)
	}
	call(t, b, "everything__echo", map[string]any{"message": "x"})
	g.WaitLabels()

	got := labels(t, pool)
	if len(got) != len(want) {
		t.Fatalf("labels %+v, want one for each of %v", got, want)
	}
	for _, l := range got {
		if r, ok := want[l.SearchID]; !ok || int(l.Rank) != r || l.LabelSource != db.LabelCall || !l.Success.Bool || deref(l.ToolSource) != "everything" {
			t.Errorf("label %+v, want rank %d for search %d", l, r, l.SearchID)
		}
	}
	var searches, labelled int64
	if err := pool.QueryRow(ctx, `SELECT searches, labelled FROM search_label_stats WHERE label_source = 'any'`).Scan(&searches, &labelled); err != nil || searches != 4 || labelled != 2 {
		t.Fatalf("search_label_stats: %d of %d searches labelled, %v; want 2 of 4", labelled, searches, err)
	}
}

// TestCallLabelsFeedObservedQueries: the query of a find_tools whose tool the session then
// called successfully is an observed query of that tool (internal/observed); one whose call
// failed is not.
func TestCallLabelsFeedObservedQueries(t *testing.T) {
	t.Parallel()
	e := setup(t, gateway.Options{CallTool: true})
	c := connectHTTP(t, serveGateway(t, e.g.HTTPHandler(), &auth.Caller{Name: "agent", Scope: auth.ScopeSearch}).URL)
	find(t, c, "send an email message", 3)
	if res := call(t, c, "call_tool", map[string]any{"name": "market__send_email", "arguments": map[string]any{"to": "a", "body": "b"}}); res.IsError {
		t.Fatalf("call failed: %s", text(res))
	}
	find(t, c, "email delivery that fails", 3)
	wantToolError(t, call(t, c, "call_tool", map[string]any{"name": "market__send_email", "arguments": map[string]any{"to": "x"}}), gateway.CodeInvalidArguments)
	e.g.WaitLabels()
	if ls := labels(t, e.pool); len(ls) != 2 || !ls[0].Success.Bool || ls[1].Success.Bool {
		t.Fatalf("labels %+v, want a successful call and a failed one", ls)
	}

	var id int64
	if err := e.pool.QueryRow(context.Background(), `SELECT id FROM tools WHERE name = 'market__send_email'`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	got, err := (&observed.Service{Pool: e.pool, Max: 3}).Queries(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != "send an email message" {
		t.Fatalf("observed queries %q, want the successful call's search only", got)
	}
}
