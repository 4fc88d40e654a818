package api

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// registerMCP mounts the MCP gateway (Streamable HTTP: POST, GET and DELETE on /mcp) and the
// capability advertisement. The API-key middleware in front puts the caller in the request
// context, which the gateway uses for the session; the gateway's refusals are written as
// every other error of the API.
func (s *Server) registerMCP(e *echo.Echo, v1 *echo.Group) {
	if s.deps.Gateway == nil {
		return
	}
	h := s.deps.Gateway.HTTPHandler()
	e.Match([]string{http.MethodGet, http.MethodPost, http.MethodDelete}, "/mcp", func(c echo.Context) error {
		// A POST body is JSON-RPC: the same 415 as every other JSON body of the API, so a
		// browser page cannot send one as text/plain without a preflight.
		if c.Request().Method == http.MethodPost {
			if err := requireMediaType(c.Request(), jsonTypes); err != nil {
				return err
			}
		}
		return h.Serve(c.Response(), c.Request())
	})
	v1.GET("/capabilities", func(c echo.Context) error {
		return c.JSON(http.StatusOK, s.deps.Gateway.Capabilities())
	})
}
