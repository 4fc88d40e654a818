package gateway_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/gateway"
	"github.com/toolgate/toolgate/internal/mcptest"
	"github.com/toolgate/toolgate/internal/pgtest"
)

// An upstream answer over MaxResponseBytes is refused with upstream_response_too_large, in
// every one of parallel calls, and the source's next call is answered.
func TestHugeUpstreamAnswerIsRefused(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	pool := pgtest.NewPool(t)
	srv := mcptest.NewRawHTTP(t, func(w http.ResponseWriter, r *http.Request, req mcptest.RawRequest) {
		var p struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(req.Params, &p)
		n := 10
		if p.Name == "read_file" {
			n = 3 * limit
		}
		mcptest.WriteResult(w, req.ID, json.RawMessage(`{"content":[{"type":"text","text":"`+strings.Repeat("a", n)+`"}]}`))
	})
	addSource(t, pool, "files", "mcp_http", srv.Config(), []catalog.Tool{
		{Name: "read_file", Description: "Read a file", InputSchema: emptySchema},
		{Name: "stat_file", Description: "Stat a file", InputSchema: emptySchema},
	})
	g := newGateway(t, pool, gateway.Options{CallTool: true, MaxResponseBytes: limit})
	c := connectHTTP(t, serveGateway(t, g.HTTPHandler(), &auth.Caller{Name: "agent", KeyID: 7, Scope: auth.ScopeSearch}).URL)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			e := wantToolError(t, call(t, c, "files__read_file", map[string]any{}), gateway.CodeUpstreamTooLarge)
			if !strings.Contains(e.Message, fmt.Sprint(limit)) {
				t.Errorf("message %q does not say the limit", e.Message)
			}
		})
	}
	wg.Wait()
	if res := call(t, c, "files__stat_file", map[string]any{}); res.IsError || text(res) != strings.Repeat("a", 10) {
		t.Fatalf("the next call: %v %q", res.IsError, text(res))
	}
}

// A call of a tool whose server redirects is refused, and the redirect's location gets
// nothing: not the source's header, not the caller's arguments.
func TestRedirectingUpstreamIsNotFollowed(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	var reached atomic.Int32
	internal := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached.Add(1) }))
	t.Cleanup(internal.Close)
	srv := mcptest.NewRawHTTP(t, func(w http.ResponseWriter, r *http.Request, req mcptest.RawRequest) {
		http.Redirect(w, r, internal.URL+"/internal-admin/delete", http.StatusTemporaryRedirect)
	})
	addSource(t, pool, "files", "mcp_http", map[string]any{"url": srv.URL + "?api_key=k-secret", "headers": map[string]string{"Authorization": "Bearer s3cret"}},
		[]catalog.Tool{{Name: "read_file", Description: "Read a file", InputSchema: emptySchema}})
	g := newGateway(t, pool, gateway.Options{CallTool: true})
	c := connectHTTP(t, serveGateway(t, g.HTTPHandler(), &auth.Caller{Name: "agent", KeyID: 7, Scope: auth.ScopeSearch}).URL)
	wantToolError(t, call(t, c, "call_tool", map[string]any{"name": "files__read_file", "arguments": map[string]any{"path": "/etc/passwd"}}), gateway.CodeUpstreamError)
	if n := reached.Load(); n != 0 {
		t.Fatalf("the redirect's location got %d requests", n)
	}
}

// call_tool with the function name of a tool the caller may not see answers exactly as for
// a function name of no tool: it quotes the name given, never the hidden catalog name.
func TestHiddenFunctionNameIsNotResolved(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	addSource(t, pool, "secret", "catalog", map[string]any{}, []catalog.Tool{
		{Name: "v1.payroll", Description: "Run the payroll", InputSchema: emptySchema},
	})
	addSource(t, pool, "mail", "catalog", map[string]any{}, []catalog.Tool{
		{Name: "send_newsletter", Description: "Send a newsletter", InputSchema: emptySchema},
	})
	g := newGateway(t, pool, gateway.Options{CallTool: true})
	c := connectHTTP(t, serveGateway(t, g.HTTPHandler(), &auth.Caller{Name: "mail-only", Scope: auth.ScopeSearch, Sources: []string{"mail"}}).URL)
	answer := func(fn string) string {
		e := wantToolError(t, call(t, c, "call_tool", map[string]any{"name": fn}), gateway.CodeUnknownTool)
		return strings.ReplaceAll(e.Message, fn, "<name>")
	}
	hidden, none := catalog.FunctionName("secret__v1.payroll"), catalog.FunctionName("secret__v2.payroll")
	if got, want := answer(hidden), answer(none); got != want || strings.Contains(got, "payroll") {
		t.Fatalf("hidden tool: %q; no tool: %q", got, want)
	}
}
