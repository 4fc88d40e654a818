package mcptest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/mcpclient"
)

// RawRequest is a JSON-RPC request a RawHTTP server received.
type RawRequest struct {
	Method string          `json:"method"`
	ID     json.RawMessage `json:"id"`
	Params json.RawMessage `json:"params"`
}

// RawHTTP is a Streamable HTTP MCP server written by hand over net/http, for answers the
// go-sdk's server never sends (a schema nested past the JSON decoder's depth limit, an
// answer of hundreds of MiB, a redirect). It answers initialize itself, accepts
// notifications with 202, refuses the standalone GET stream with 405 (the specification
// allows it), hands tools/list and tools/call to the test's answer, and answers any other
// method (server/discover among them) with JSON-RPC error -32601, method not found.
type RawHTTP struct{ URL string }

// NewRawHTTP starts a RawHTTP server until the test ends.
func NewRawHTTP(t testing.TB, answer func(w http.ResponseWriter, r *http.Request, req RawRequest)) *RawHTTP {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req RawRequest
		body, err := io.ReadAll(r.Body)
		if err != nil || json.Unmarshal(body, &req) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		switch {
		case len(req.ID) == 0:
			w.WriteHeader(http.StatusAccepted)
		case req.Method == "initialize":
			WriteResult(w, req.ID, json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`))
		case req.Method == "tools/list" || req.Method == "tools/call":
			answer(w, r, req)
		default:
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":-32601,"message":"method not found"}}`))
		}
	}))
	t.Cleanup(ts.Close)
	return &RawHTTP{URL: ts.URL}
}

// Config is the mcp_http source config of the server.
func (h *RawHTTP) Config() mcpclient.Config { return mcpclient.Config{URL: h.URL} }

// WriteResult answers the request id with result, as one JSON response.
func WriteResult(w http.ResponseWriter, id json.RawMessage, result json.RawMessage) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + string(result) + `}`))
}

// ToolsResult is the result of a tools/list answer listing tools on one page, each
// definition written as it is (a schema nested past the go-sdk's depth limit included).
func ToolsResult(tools []catalog.Tool) json.RawMessage {
	type tool struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	list := make([]tool, len(tools))
	for i, t := range tools {
		list[i] = tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
	}
	data, err := json.Marshal(map[string]any{"tools": list})
	if err != nil {
		panic(err)
	}
	return data
}

// WriteEvent answers the request id with result, as one server-sent event.
func WriteEvent(w http.ResponseWriter, id json.RawMessage, result json.RawMessage) {
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = w.Write([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":" + string(id) + ",\"result\":" + string(result) + "}\n\n"))
}

// serveRaw speaks MCP over stdio by hand, for the Raw behaviour: it answers initialize and
// tools/list (tools on one page), ignores notifications and answers any other method with
// JSON-RPC error -32601, until stdin ends.
func serveRaw(tools []catalog.Tool) {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 64<<20)
	for in.Scan() {
		var req RawRequest
		if json.Unmarshal(in.Bytes(), &req) != nil || len(req.ID) == 0 {
			continue
		}
		var body string
		switch req.Method {
		case "initialize":
			body = `"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`
		case "tools/list":
			body = `"result":` + string(ToolsResult(tools))
		default:
			body = `"error":{"code":-32601,"message":"method not found"}`
		}
		fmt.Println(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,` + body + `}`)
	}
}
