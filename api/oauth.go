package api

import (
	"net/http"

	"github.com/labstack/echo/v4"
	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/toolgate/toolgate/internal/oauth"
)

// registerOAuth serves the Protected Resource Metadata (RFC 9728) of the server and of its
// /mcp, when OAuth is on: the resource identifier, the authorization servers whose tokens
// are accepted and the scopes. The go-sdk's handler answers GET and the CORS preflight.
func (s *Server) registerOAuth(e *echo.Echo) {
	if s.deps.OAuth == nil {
		return
	}
	methods := []string{http.MethodGet, http.MethodOptions}
	for _, path := range []string{"", oauth.MCPPath} {
		h := echo.WrapHandler(sdkauth.ProtectedResourceMetadataHandler(s.deps.OAuth.Metadata(path)))
		e.Match(methods, oauth.MetadataPath+path, h)
	}
}
