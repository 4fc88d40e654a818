package api_test

import (
	"log/slog"
	"net"
	"net/http/httptest"
	"testing"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/mcptest"
	"github.com/toolgate/toolgate/internal/oauth"
)

// serveWithOAuth serves the API of deps on a port of its own, which is its resource
// identifier, beside a real authorization server that issues tokens for it to clients.
// settings' Issuers and Resource are filled in; its other fields are kept (a rate limit,
// say). It returns the server, the authorization server and the resource identifier.
func serveWithOAuth(t *testing.T, deps api.Deps, settings oauth.Settings, clients ...mcptest.AuthClient) (*httptest.Server, *mcptest.AuthServer, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	resource := "http://" + ln.Addr().String()
	as := mcptest.StartAuthServer(t, mcptest.AuthServerConfig{Resources: []string{resource}, Clients: clients})
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	settings.Issuers, settings.Resource = []string{as.Issuer}, resource
	deps.OAuth = oauth.NewVerifier(settings, deps.Logger)
	srv := httptest.NewUnstartedServer(api.New(deps))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, as, resource
}
