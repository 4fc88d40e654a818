package api

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/internal/httpguard"
	"github.com/toolgate/toolgate/internal/upstreamauth"
)

// guard refuses what a web page could make a visitor's browser send (docs/auth.md#browsers):
// in every mode a request for a page of another origin — unless that origin is one of
// Deps.CORSOrigins and the route is a search route (corsAllowed) — and in open mode, where
// no key stands in the way, a request whose Host is a name other than localhost (a
// DNS-rebinding page reaches a server on the loopback address under its own domain name).
func (s *Server) guard(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if origin := r.Header.Get("Origin"); origin != "" && s.corsAllowed(c, origin) {
			h := c.Response().Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Add("Vary", "Origin")
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
				h.Set("Access-Control-Allow-Headers", corsRequestHeaders)
				h.Set("Access-Control-Max-Age", "600")
				return c.NoContent(http.StatusNoContent)
			}
			h.Set("Access-Control-Expose-Headers", corsExposedHeaders)
			return next(c)
		}
		// The OAuth callback is the one request that comes from another site by design: the
		// upstream authorization server's page sends the operator's browser there. It does
		// nothing without a pending state an admin started (upstream_auth.go).
		if err := httpguard.CheckOrigin(r); err != nil && c.Path() != upstreamauth.CallbackPath {
			return err
		}
		if s.deps.Open {
			if err := httpguard.CheckRebindingHost(r); err != nil {
				return err
			}
		}
		return next(c)
	}
}

// corsRequestHeaders are the headers a page of a listed origin may send: its credential,
// the JSON body's type and the MCP transport's own headers.
const corsRequestHeaders = "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID"

// corsExposedHeaders are the answer's headers such a page may read: the MCP session, the
// challenge of a refused credential, the rate limit and the search id.
const corsExposedHeaders = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, Retry-After, RateLimit-Limit, RateLimit-Remaining, Toolgate-Search-Id"

// corsAllowed reports whether a page of origin may make this request from a browser: the
// origin is listed in TOOLGATE_CORS_ORIGINS and the route (for a preflight, the route of the
// method it asks for) needs a search caller, never an admin one — a page's script holds a
// token or key of its user, and the admin API stays same-origin, for the console. Open mode
// lists no origin (config refuses it): there a page would act as admin without a key.
func (s *Server) corsAllowed(c echo.Context, origin string) bool {
	if len(s.deps.CORSOrigins) == 0 || s.deps.Open || !s.deps.CORSOrigins.Allows(origin) {
		return false
	}
	method := c.Request().Method
	if method == http.MethodOptions {
		method = strings.ToUpper(strings.TrimSpace(c.Request().Header.Get("Access-Control-Request-Method")))
	}
	return routeAccessOf(method, c.Path()) == accessSearch
}
