package api_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// The documented shapes the vendor answers and exports are checked against, quoted from the
// vendors' documentation and SDK types (docs/vendors.md lists the sources).
const (
	// OpenAI's tool search guide (developers.openai.com/api/docs/guides/tools-tool-search), a
	// namespace of deferred functions, inside the tool_search_output item of the openai
	// package's ResponseToolSearchOutputItemParam (type, tools; call_id, execution, status).
	docOpenAIToolSearchOutput = `{
	  "type": "tool_search_output",
	  "execution": "client",
	  "call_id": "call_abc123",
	  "status": "completed",
	  "tools": [{
	    "type": "namespace",
	    "name": "crm",
	    "description": "CRM tools for customer lookup and order management.",
	    "tools": [{
	      "type": "function",
	      "name": "list_open_orders",
	      "description": "List open orders for a customer ID.",
	      "defer_loading": true,
	      "parameters": {"type": "object", "properties": {"customer_id": {"type": "string"}},
	        "required": ["customer_id"], "additionalProperties": false}
	    }]
	  }]
	}`
	// The same guide's client-executed tool_search tool (ToolSearchTool in the openai package).
	docOpenAIClientToolSearch = `{"type": "tool_search", "execution": "client",
	  "description": "Find the tools for a task.",
	  "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}`
	// Anthropic's tool search tool, custom implementation (platform.claude.com/docs/en/
	// agents-and-tools/tool-use/tool-search-tool): the tool_result of the custom search tool
	// holds tool_reference blocks (ToolResultBlockParam, ToolReferenceBlockParam in
	// @anthropic-ai/sdk).
	docAnthropicToolResult = `{
	  "type": "tool_result",
	  "tool_use_id": "toolu_01ABC123",
	  "content": [{"type": "tool_reference", "tool_name": "get_weather"}]
	}`
	// A deferred tool definition of the same page (Tool in @anthropic-ai/sdk).
	docAnthropicDeferredTool = `{"name": "get_weather", "description": "Get the weather at a specific location",
	  "input_schema": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
	  "defer_loading": true}`
	// A custom tool that is not deferred: the custom search tool itself.
	docAnthropicTool = `{"name": "get_weather", "description": "Get the weather at a specific location",
	  "input_schema": {"type": "object", "properties": {"location": {"type": "string"}}}}`
)

// sameShape fails unless got has doc's shape: an object the same keys (recursively, except
// inside JSON Schemas, which are the tools' own), an array elements of the shape of doc's
// first, a scalar the same JSON type.
func sameShape(t *testing.T, path string, doc, got any) {
	t.Helper()
	switch d := doc.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			t.Errorf("%s: %T, want an object", path, got)
			return
		}
		if dk, gk := keys(d), keys(g); !slices.Equal(dk, gk) {
			t.Errorf("%s: keys %v, want %v (documented)", path, gk, dk)
			return
		}
		for k, v := range d {
			if k == "parameters" || k == "input_schema" {
				if _, ok := g[k].(map[string]any); !ok {
					t.Errorf("%s.%s: %T, want a JSON Schema object", path, k, g[k])
				}
				continue
			}
			sameShape(t, path+"."+k, v, g[k])
		}
	case []any:
		g, ok := got.([]any)
		if !ok {
			t.Errorf("%s: %T, want an array", path, got)
			return
		}
		for i, e := range g {
			sameShape(t, path+"["+strconv.Itoa(i)+"]", d[0], e)
		}
	default:
		if d == nil || got == nil {
			if d != got {
				t.Errorf("%s: %v, want %v", path, got, d)
			}
			return
		}
		if dt, gt := jsonType(d), jsonType(got); dt != gt {
			t.Errorf("%s: %s, want %s", path, gt, dt)
		}
	}
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		return "number"
	}
	return "other"
}

func decodeDoc(t *testing.T, doc string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("documented example: %v", err)
	}
	return v
}

// vendorAPI is a server with keys and search over two sources: acme (get_stock_price,
// send_email) and globex (send_fax).
type vendorAPI struct {
	e             *echo.Echo
	all, acmeOnly string // search keys: every source, acme only
}

func newVendorAPI(t *testing.T) vendorAPI {
	t.Helper()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	price := testfactory.Tool("get_stock_price", "Latest stock price of a ticker")
	price.InputSchema = json.RawMessage(`{"type":"object","properties":{"ticker":{"type":"string"}},"required":["ticker"]}`)
	testfactory.Catalog(ctx, t, pool, "acme", []catalog.Tool{price, testfactory.Tool("send_email", "Send an email message")}, nil)
	testfactory.Catalog(ctx, t, pool, "globex", []catalog.Tool{testfactory.Tool("send_fax", "Send a fax message")}, nil)
	log := slog.New(slog.DiscardHandler)
	keys := auth.NewKeys(pool, time.Now)
	a := vendorAPI{e: api.New(api.Deps{Pool: pool, Logger: log, Keys: keys, Search: search.New(pool, nil, search.DefaultSettings(), log)})}
	for _, k := range []struct {
		spec auth.Spec
		text *string
	}{{auth.Spec{Name: "agent", Scope: auth.ScopeSearch}, &a.all},
		{auth.Spec{Name: "acme-agent", Scope: auth.ScopeSearch, Sources: []string{"acme"}}, &a.acmeOnly}} {
		_, text, err := keys.Create(ctx, k.spec)
		if err != nil {
			t.Fatal(err)
		}
		*k.text = text
	}
	return a
}

// raw sends a request and returns the status, the header and the decoded JSON body.
func (a vendorAPI) raw(t *testing.T, method, path, key, body string) (int, http.Header, any) {
	t.Helper()
	req := httptest.NewRequest(method, "http://localhost"+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	rec := httptest.NewRecorder()
	a.e.ServeHTTP(rec, req)
	var out any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s %s: body is not JSON: %v\n%s", method, path, err, rec.Body.String())
	}
	return rec.Code, rec.Header(), out
}

// vendorNames are the tool names of an OpenAI answer or export (inside its namespaces), or of an
// Anthropic one (tool_name of the references, name of the definitions).
func vendorNames(v any) []string {
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			switch x["type"] {
			case "function":
				out = append(out, x["name"].(string))
			case "tool_reference":
				out = append(out, x["tool_name"].(string))
			case nil: // an Anthropic definition, or the export's {"tools": …}
				if name, ok := x["name"].(string); ok {
					out = append(out, name)
				}
			}
			for _, k := range []string{"tools", "content"} {
				walk(x[k])
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	sort.Strings(out)
	return out
}

func TestSearchOpenAIToolSearchOutput(t *testing.T) {
	t.Parallel()
	a := newVendorAPI(t)
	code, header, got := a.raw(t, "POST", "/search", a.all,
		`{"query":"send a message","mode":"lexical","format":"openai_tool_search","call_id":"call_abc123"}`)
	if code != 200 {
		t.Fatalf("search: %d %v", code, got)
	}
	sameShape(t, "answer", decodeDoc(t, docOpenAIToolSearchOutput), got)
	item := got.(map[string]any)
	if item["type"] != "tool_search_output" || item["execution"] != "client" || item["call_id"] != "call_abc123" || item["status"] != "completed" {
		t.Errorf("item fields: %v", item)
	}
	// grouped by source, each namespace once, its functions deferred under their catalog
	// function names
	want := map[string][]string{"acme": {"acme__send_email"}, "globex": {"globex__send_fax"}}
	for _, n := range item["tools"].([]any) {
		ns := n.(map[string]any)
		if ns["type"] != "namespace" || ns["description"] != "Tools of the "+ns["name"].(string)+" source." {
			t.Errorf("namespace: %v", ns)
		}
		var fns []string
		for _, f := range ns["tools"].([]any) {
			fn := f.(map[string]any)
			if fn["defer_loading"] != true || fn["type"] != "function" {
				t.Errorf("function: %v", fn)
			}
			fns = append(fns, fn["name"].(string))
		}
		if !slices.Equal(fns, want[ns["name"].(string)]) {
			t.Errorf("namespace %v: functions %v, want %v", ns["name"], fns, want[ns["name"].(string)])
		}
		delete(want, ns["name"].(string))
	}
	if len(want) != 0 {
		t.Errorf("namespaces missing: %v", want)
	}
	if id, err := strconv.ParseInt(header.Get("Toolgate-Search-Id"), 10, 64); err != nil || id <= 0 {
		t.Errorf("Toolgate-Search-Id %q", header.Get("Toolgate-Search-Id"))
	}
	// without a call_id, call_id is null (the type allows it)
	if code, _, got := a.raw(t, "POST", "/search", a.all, `{"query":"stock","mode":"lexical","format":"openai_tool_search"}`); code != 200 ||
		got.(map[string]any)["call_id"] != nil {
		t.Errorf("no call_id: %d %v", code, got)
	}
}

func TestSearchAnthropicToolReference(t *testing.T) {
	t.Parallel()
	a := newVendorAPI(t)
	code, _, got := a.raw(t, "POST", "/search", a.all,
		`{"query":"send a message","mode":"lexical","format":"anthropic_tool_reference","call_id":"toolu_01ABC123"}`)
	if code != 200 {
		t.Fatalf("search: %d %v", code, got)
	}
	sameShape(t, "answer", decodeDoc(t, docAnthropicToolResult), got)
	block := got.(map[string]any)
	if block["type"] != "tool_result" || block["tool_use_id"] != "toolu_01ABC123" {
		t.Errorf("block fields: %v", block)
	}
	if n := vendorNames(got); !slices.Equal(n, []string{"acme__send_email", "globex__send_fax"}) {
		t.Errorf("references %v", n)
	}
}

// A search key sees only its sources, in the answers and in the exports, and the names of
// both agree: the export gives the names the answers load.
func TestVendorFormatsSeeOnlyTheKeysSources(t *testing.T) {
	t.Parallel()
	a := newVendorAPI(t)
	for _, format := range []string{"openai_tool_search", "anthropic_tool_reference"} {
		code, _, got := a.raw(t, "POST", "/search", a.acmeOnly,
			`{"query":"send a message","mode":"lexical","format":"`+format+`","call_id":"c1"}`)
		if n := vendorNames(got); code != 200 || !slices.Equal(n, []string{"acme__send_email"}) {
			t.Errorf("%s: %d %v", format, code, got)
		}
	}
	for format, want := range map[string][]string{
		"openai":    {"acme__get_stock_price", "acme__send_email"},
		"anthropic": {"acme__get_stock_price", "acme__send_email", "search_tools"},
	} {
		code, _, got := a.raw(t, "GET", "/v1/tools/export?format="+format, a.acmeOnly, "")
		if n := vendorNames(got); code != 200 || !slices.Equal(n, want) {
			t.Errorf("export %s: %d %v", format, code, got)
		}
		if code, _, got := a.raw(t, "GET", "/v1/tools/export?format="+format+"&source=globex", a.acmeOnly, ""); code != 404 {
			t.Errorf("export %s of another source: %d %v", format, code, got)
		}
	}
}

func TestExportOpenAI(t *testing.T) {
	t.Parallel()
	a := newVendorAPI(t)
	code, _, got := a.raw(t, "GET", "/v1/tools/export?format=openai", a.all, "")
	if code != 200 {
		t.Fatalf("export: %d %v", code, got)
	}
	tools := got.(map[string]any)["tools"].([]any)
	if len(tools) != 3 {
		t.Fatalf("tools: %v", tools)
	}
	ns := decodeDoc(t, docOpenAIToolSearchOutput).(map[string]any)["tools"].([]any)[0]
	for i, name := range []string{"acme", "globex"} {
		sameShape(t, name, ns, tools[i])
		if n := tools[i].(map[string]any); n["name"] != name || n["type"] != "namespace" {
			t.Errorf("namespace %d: %v", i, n)
		}
	}
	sameShape(t, "tool_search", decodeDoc(t, docOpenAIClientToolSearch), tools[2])
	if ts := tools[2].(map[string]any); ts["type"] != "tool_search" || ts["execution"] != "client" {
		t.Errorf("tool_search: %v", ts)
	}
	if n := vendorNames(got); !slices.Equal(n, []string{"acme__get_stock_price", "acme__send_email", "globex__send_fax"}) {
		t.Errorf("functions %v", n)
	}
	price := tools[0].(map[string]any)["tools"].([]any)[0].(map[string]any)
	if price["name"] != "acme__get_stock_price" || price["defer_loading"] != true ||
		price["parameters"].(map[string]any)["required"].([]any)[0] != "ticker" {
		t.Errorf("function: %v", price)
	}
}

func TestExportAnthropic(t *testing.T) {
	t.Parallel()
	a := newVendorAPI(t)
	code, _, got := a.raw(t, "GET", "/v1/tools/export?format=anthropic", a.all, "")
	if code != 200 {
		t.Fatalf("export: %d %v", code, got)
	}
	tools := got.(map[string]any)["tools"].([]any)
	if len(tools) != 4 {
		t.Fatalf("tools: %v", tools)
	}
	for i, name := range []string{"acme__get_stock_price", "acme__send_email", "globex__send_fax"} {
		sameShape(t, name, decodeDoc(t, docAnthropicDeferredTool), tools[i])
		if d := tools[i].(map[string]any); d["name"] != name || d["defer_loading"] != true {
			t.Errorf("tool %d: %v", i, d)
		}
	}
	// the search tool is not deferred: the model must see it to search
	sameShape(t, "search_tools", decodeDoc(t, docAnthropicTool), tools[3])
	if d := tools[3].(map[string]any); d["name"] != "search_tools" {
		t.Errorf("search tool: %v", d)
	}
}

func TestVendorFormatErrors(t *testing.T) {
	t.Parallel()
	a := newVendorAPI(t)
	for _, tc := range []struct{ method, path, body, field string }{
		{"POST", "/search", `{"query":"fax","format":"openai_tools"}`, "format"},
		{"POST", "/search", `{"query":"fax","format":"anthropic_tool_reference"}`, "call_id"},
		{"POST", "/search", `{"query":"fax","format":"raw","call_id":"c1"}`, "call_id"},
		{"GET", "/v1/tools/export", "", "format"},
		{"GET", "/v1/tools/export?format=openai_tool_search", "", "format"},
	} {
		code, _, got := a.raw(t, tc.method, tc.path, a.all, tc.body)
		e, _ := got.(map[string]any)["error"].(map[string]any)
		if code != 400 || e["code"] != "invalid_request" || !strings.Contains(e["message"].(string), tc.field) {
			t.Errorf("%s %s %s: %d %v", tc.method, tc.path, tc.body, code, got)
		}
	}
}
