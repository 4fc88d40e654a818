package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/internal/search"
)

// mcpPeekBytes is how much of a POST /mcp body is read to find a search in it: the MCP
// gateway's own bound on a body (docs/auth.md#limits), so that no padding hides a
// find_tools call from the key's share.
const mcpPeekBytes = 4 << 20

// registerMCP mounts the MCP gateway (Streamable HTTP: POST, GET and DELETE on /mcp) and the
// capability advertisement. The API-key middleware in front puts the caller in the request
// context, which the gateway uses for the session; the gateway's refusals are written as
// every other error of the API.
func (s *Server) registerMCP(e *echo.Echo, v1 *echo.Group) {
	if s.deps.Gateway == nil {
		return
	}
	h := s.deps.Gateway.HTTPHandler()
	h.Origins = s.deps.CORSOrigins
	e.Match([]string{http.MethodGet, http.MethodPost, http.MethodDelete}, "/mcp", func(c echo.Context) error {
		// A POST body is JSON-RPC: the same 415 as every other JSON body of the API, so a
		// browser page cannot send one as text/plain without a preflight.
		if c.Request().Method == http.MethodPost {
			if err := requireMediaType(c.Request(), jsonTypes); err != nil {
				return err
			}
			release, err := s.shareMCPSearch(c)
			if err != nil {
				return err
			}
			defer release()
		}
		return h.Serve(c.Response(), c.Request())
	})
	v1.GET("/capabilities", func(c echo.Context) error {
		return c.JSON(http.StatusOK, s.deps.Gateway.Capabilities())
	})
}

// shareMCPSearch takes the key's share (fairShare) for a POST /mcp that calls find_tools or
// use_tool, both a search, and puts the body back for the gateway, which reads and checks
// it itself (a body it cannot read, or over its bound, is its refusal to make).
func (s *Server) shareMCPSearch(c echo.Context) (release func(), err error) {
	r := c.Request()
	body, _ := io.ReadAll(io.LimitReader(r.Body, mcpPeekBytes))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	cost, ok := mcpSearchCost(body)
	if !ok {
		return func() {}, nil
	}
	caller, err := requestCaller(c)
	if err != nil {
		return nil, err
	}
	return s.fair.acquireFor(c, caller, cost, mcpShareWait)
}

// mcpSearchCost is the search cost of a JSON-RPC message that calls find_tools (its limit is
// the search's k) or use_tool (k = 1); false for any other message.
func mcpSearchCost(body []byte) (int, bool) {
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Name      string `json:"name"`
			Arguments struct {
				Limit int `json:"limit"`
			} `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "tools/call" {
		return 0, false
	}
	switch msg.Params.Name {
	case "find_tools":
		return searchCost(search.Request{K: msg.Params.Arguments.Limit}), true
	case "use_tool":
		return searchCost(search.Request{K: 1}), true
	}
	return 0, false
}
