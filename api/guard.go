package api

import (
	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/internal/httpguard"
	"github.com/toolgate/toolgate/internal/upstreamauth"
)

// guard refuses what a web page could make a visitor's browser send (docs/auth.md#browsers):
// in every mode a request for a page of another origin, and in open mode, where no key
// stands in the way, a request whose Host is a name other than localhost (a DNS-rebinding
// page reaches a server on the loopback address under its own domain name).
func (s *Server) guard(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		// The OAuth callback is the one request that comes from another site by design: the
		// upstream authorization server's page sends the operator's browser there. It does
		// nothing without a pending state an admin started (upstream_auth.go).
		if c.Path() == upstreamauth.CallbackPath {
			return next(c)
		}
		if err := httpguard.CheckOrigin(c.Request()); err != nil {
			return err
		}
		if s.deps.Open {
			if err := httpguard.CheckRebindingHost(c.Request()); err != nil {
				return err
			}
		}
		return next(c)
	}
}
