package api

import (
	"html/template"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/upstreamauth"
)

// registerUpstreamAuth adds the routes of OAuth to mcp_http sources (docs/upstream-oauth.md):
// an admin starts and revokes a source's authorization; the callback, public, finishes it.
func (s *Server) registerUpstreamAuth(e *echo.Echo, v1 *echo.Group) {
	v1.POST("/sources/:name/oauth/authorize", s.authorizeSource)
	v1.POST("/sources/:name/oauth/revoke", s.revokeSource)
	e.GET(upstreamauth.CallbackPath, s.oauthCallback)
}

// authorizationView is a source's OAuth authorization as the API shows it: never a token.
type authorizationView struct {
	State        string     `json:"state"`
	Error        *string    `json:"error,omitempty"`
	Issuer       string     `json:"issuer,omitempty"`
	ExpiresAt    *time.Time `json:"expires_at,omitempty"`
	AuthorizedAt *time.Time `json:"authorized_at,omitempty"`
}

// newAuthorizationView is the authorization of the source of r, which is configured for OAuth.
func newAuthorizationView(r db.ListSourceSummariesRow) *authorizationView {
	if r.AuthState == "" {
		return &authorizationView{State: upstreamauth.StateUnauthorized}
	}
	v := &authorizationView{State: r.AuthState, Error: r.AuthError, ExpiresAt: r.AuthExpiresAt, AuthorizedAt: r.AuthAuthorizedAt}
	if r.AuthIssuer != nil {
		v.Issuer = *r.AuthIssuer
	}
	return v
}

func (s *Server) upstreamAuth() (*upstreamauth.Manager, error) {
	if s.deps.UpstreamAuth == nil {
		return nil, &upstreamauth.KeysMissingError{}
	}
	return s.deps.UpstreamAuth, nil
}

// authorizeSourceRequest is the body of POST /v1/sources/{name}/oauth/authorize, which may
// be empty.
type authorizeSourceRequest struct {
	// ClientSecret is the secret of the source's pre-registered client (oauth.client_id).
	ClientSecret string `json:"client_secret"`
}

// authorizeSource starts the authorization of an OAuth source and answers the URL the
// operator opens to sign in at the source's authorization server.
func (s *Server) authorizeSource(c echo.Context) error {
	m, err := s.upstreamAuth()
	if err != nil {
		return err
	}
	var req authorizeSourceRequest
	if c.Request().ContentLength != 0 {
		if err := decodeJSON(c, &req); err != nil {
			return err
		}
	}
	caller, err := requestCaller(c)
	if err != nil {
		return err
	}
	start, err := m.Start(c.Request().Context(), c.Param("name"), upstreamauth.StartRequest{ClientSecret: req.ClientSecret, StartedBy: caller.Name})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, start)
}

// revokeSource forgets an OAuth source's tokens, after asking its authorization server to
// revoke them when it can.
func (s *Server) revokeSource(c echo.Context) error {
	m, err := s.upstreamAuth()
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	rev, err := m.Revoke(ctx, c.Param("name"))
	if err != nil {
		return err
	}
	v, err := s.viewSource(ctx, c.Param("name"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"revoked_at_server": rev.AtServer, "error": rev.Error, "source": v})
}

var callbackPage = template.Must(template.New("callback").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>toolgate: source authorized</title></head>
<body><p>Source <strong>{{.}}</strong> is authorized; its sync is queued. You can close this page.</p>
<p><a href="/ui/">Open the console</a></p></body></html>
`))

// oauthCallback finishes an authorization: the authorization server sent the operator's
// browser here with the state toolgate issued and a code. A state that is not pending (never
// issued, used, expired) is refused; on success the source's sync is queued.
func (s *Server) oauthCallback(c echo.Context) error {
	m, err := s.upstreamAuth()
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	q := c.Request().URL.Query()
	name, err := m.Finish(ctx, q.Get("state"), q.Get("code"), q.Get("error"), q.Get("error_description"))
	if err != nil {
		return err
	}
	if _, _, err := s.sources.SyncNow(ctx, name); err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	c.Response().Header().Set("Content-Type", "text/html; charset=utf-8")
	c.Response().WriteHeader(http.StatusOK)
	return callbackPage.Execute(c.Response(), name)
}
