package mcpclient_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/mcptest"
)

// nestedSchema is an input schema of levels nested objects (itself the first).
func nestedSchema(levels int) json.RawMessage {
	return json.RawMessage(`{"type":"object","n":` + strings.Repeat(`{"n":`, levels-2) + `{}` + strings.Repeat(`}`, levels-2) + `}`)
}

// DeepTools is a listing with a tool nested as deep as an MCP message may be read (the
// message, its result and the tools list nest 3 levels, the tool 1 more: 996 levels of
// schema make 1,000) and one nested one level deeper, among good tools.
func deepTools() []catalog.Tool {
	return []catalog.Tool{
		{Name: "first", Description: "A good tool.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "at_limit", Description: "As deep as may be.", InputSchema: nestedSchema(996)},
		{Name: "too_deep", Description: "One level deeper.", InputSchema: nestedSchema(997)},
		{Name: "last", Description: "Another good tool.", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}
}

// deepServers serve deepTools over stdio, and over HTTP as one JSON answer and as a
// server-sent event: servers written by hand, since the go-sdk's server refuses such a tool.
func deepServers(t *testing.T, tools []catalog.Tool) map[string]struct {
	kind db.SourceKind
	srv  server
} {
	answer := func(write func(http.ResponseWriter, json.RawMessage, json.RawMessage)) func(http.ResponseWriter, *http.Request, mcptest.RawRequest) {
		return func(w http.ResponseWriter, _ *http.Request, req mcptest.RawRequest) {
			write(w, req.ID, mcptest.ToolsResult(tools))
		}
	}
	return map[string]struct {
		kind db.SourceKind
		srv  server
	}{
		"stdio":     {mcpclient.KindStdio, mcptest.NewStdio(t, tools, mcptest.Raw, 0)},
		"http json": {mcpclient.KindHTTP, mcptest.NewRawHTTP(t, answer(mcptest.WriteResult))},
		"http sse":  {mcpclient.KindHTTP, mcptest.NewRawHTTP(t, answer(mcptest.WriteEvent))},
	}
}

// A tool nested past the depth the go-sdk reads a message to is listed as refused, by its
// name, and the rest of the listing is read: before, the whole answer failed to decode,
// and with it the listing (and over stdio the session).
func TestListCutsToolsNestedTooDeep(t *testing.T) {
	for name, s := range deepServers(t, deepTools()) {
		t.Run(name, func(t *testing.T) {
			got, err := mcpclient.List(context.Background(), s.kind, s.srv.Config(), 20*time.Second, mcpclient.Options{Commands: mcptest.Commands()})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, g := range got {
				names = append(names, g.Name)
			}
			if strings.Join(names, " ") != "first at_limit too_deep last" {
				t.Fatalf("listed %v", names)
			}
			if got[1].Refused != "" || canon(t, got[1].InputSchema) != canon(t, nestedSchema(996)) {
				t.Errorf("the tool at the limit was not read whole: refused %q", got[1].Refused)
			}
			err = got[2].Validate()
			if got[2].Refused == "" || err == nil || !strings.Contains(err.Error(), "997 levels") {
				t.Errorf("the deep tool: refused %q, validate %v", got[2].Refused, err)
			}
			for _, i := range []int{0, 1, 3} {
				if err := got[i].Validate(); err != nil {
					t.Errorf("%s: %v", got[i].Name, err)
				}
			}
		})
	}
}
