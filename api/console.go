package api

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/internal/console"
)

// registerConsole serves the operator console under /ui/ (internal/console: static files
// that carry no data, public) and GET /v1/whoami, which tells the console, or any client,
// what the caller's key may do.
func (s *Server) registerConsole(e *echo.Echo, v1 *echo.Group) {
	// before routing, so that the answers the middleware gives a console path itself (a
	// cross-origin refusal, a bad path) carry the console's headers too
	e.Pre(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if console.IsPath(c.Request().URL.Path) {
				console.SetHeaders(c.Response().Header())
			}
			return next(c)
		}
	})
	ui := echo.WrapHandler(console.Handler())
	e.GET("/ui", ui)
	e.GET("/ui/*", ui)
	v1.GET("/whoami", s.whoami)
}

// whoamiView is the caller of a request: its key's name, what the key is ("admin",
// "search", or "open" in open mode, where no key is needed) and the sources it may see
// (null: every source).
type whoamiView struct {
	Name    string   `json:"name"`
	Kind    string   `json:"kind"`
	Sources []string `json:"sources"`
	// Tenant is whom the caller's searches teach (docs/learning.md): "" for the operator
	// (open mode, an admin key), whose searches teach every tenant; "key:<name>" for a
	// search key of no tenant.
	Tenant string `json:"tenant"`
}

func (s *Server) whoami(c echo.Context) error {
	caller, err := requestCaller(c)
	if err != nil {
		return err
	}
	kind := string(caller.Scope)
	if s.deps.Open {
		kind = "open"
	}
	tenant := caller.Tenant
	if strings.HasPrefix(tenant, "key:") {
		tenant = "key:" + caller.Name // named by the key, not by its internal id
	}
	return c.JSON(http.StatusOK, whoamiView{Name: caller.Name, Kind: kind, Sources: caller.Sources, Tenant: tenant})
}
