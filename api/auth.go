package api

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/oauth"
	"github.com/toolgate/toolgate/internal/upstreamauth"
)

// access is what a route requires of its caller.
type access int

const (
	accessAdmin  access = iota // an admin key (the default of every route not listed below)
	accessSearch               // a search or admin key
	accessPublic               // no key at all
)

// routeAccess is the whole access policy: "METHOD path" (Echo's route path, as c.Path()
// returns it; "*" matches every method) → what the route requires. A route missing here
// needs an admin key, so a new endpoint is closed until someone opens it on purpose.
//
// /openapi.json is public: it is the contract a client reads before it holds a key, and
// it describes endpoints, never data. So are the console's files (/ui/): the page asks
// for the operator's key, then reads every datum from the API with it.
var routeAccess = map[string]access{
	"GET /healthz":              accessPublic,
	"GET /readyz":               accessPublic,
	"GET /openapi.json":         accessPublic,
	"POST /search":              accessSearch,
	"POST /search/:id/feedback": accessSearch,
	"GET /v1/capabilities":      accessSearch,
	"* /mcp":                    accessSearch,
	"GET /v1/whoami":            accessSearch,
	"GET /v1/tools/export":      accessSearch,
	"GET /ui":                   accessPublic,
	"GET /ui/*":                 accessPublic,
	// the OAuth Protected Resource Metadata (oauth.go), read before a client holds a token
	"* " + oauth.MetadataPath:                 accessPublic,
	"* " + oauth.MetadataPath + oauth.MCPPath: accessPublic,
	// where an upstream authorization server sends the operator's browser back: it takes
	// only a state toolgate issued to an admin (upstream_auth.go)
	"GET " + upstreamauth.CallbackPath: accessPublic,
}

// routeAccessOf returns what the route of method and path requires.
func routeAccessOf(method, path string) access {
	if a, ok := routeAccess[method+" "+path]; ok {
		return a
	}
	if a, ok := routeAccess["* "+path]; ok {
		return a
	}
	return accessAdmin
}

// openCaller is the caller of every request in open mode.
var openCaller = auth.Caller{Name: "open", Scope: auth.ScopeAdmin}

// authenticate identifies the caller by its Bearer key, or by its OAuth access token when
// OAuth is on and the credential is not a key (authenticateToken), checks the route's scope
// and the key's rate limit, and puts the caller in the request context. In open mode every
// request is the admin caller "open".
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		need := routeAccessOf(c.Request().Method, c.Path())
		if need == accessPublic {
			return next(c)
		}
		if s.deps.Open {
			caller := openCaller
			setCaller(c, &caller)
			return next(c)
		}
		ctx := c.Request().Context()
		needScope := auth.ScopeAdmin
		if need == accessSearch {
			needScope = auth.ScopeSearch
		}
		credential := bearer(c.Request())
		if s.deps.OAuth != nil && credential != "" && !auth.IsKeyText(credential) {
			return s.authenticateToken(c, next, credential, needScope)
		}
		key, err := s.keys.Verify(ctx, credential)
		if err != nil {
			if errors.Is(err, auth.ErrInvalidKey) || errors.Is(err, auth.ErrRevokedKey) {
				s.challenge(c, "")
			}
			return err
		}
		if !key.Scope.Allows(needScope) {
			return &auth.ScopeError{Have: key.Scope, Need: needScope}
		}
		remaining, err := s.keys.Use(ctx, key)
		if err := rateLimited(c, key.RatePerMin, remaining, err); err != nil {
			return err
		}
		setCaller(c, key.Caller())
		return next(c)
	}
}

// rateLimited sets the rate-limit headers of a counted request (limit per minute, the
// window's remaining requests, -1 when unlimited) and returns its refusal, if any: a 429
// with Retry-After.
func rateLimited(c echo.Context, limit, remaining int, err error) error {
	h := c.Response().Header()
	var rl *auth.RateLimitError
	if errors.As(err, &rl) {
		h.Set("Retry-After", strconv.Itoa(auth.RetryAfterSeconds(rl.RetryAfter)))
		h.Set("RateLimit-Limit", strconv.Itoa(rl.Limit))
		h.Set("RateLimit-Remaining", "0")
		return err
	}
	if err != nil {
		return err
	}
	if remaining >= 0 {
		h.Set("RateLimit-Limit", strconv.Itoa(limit))
		h.Set("RateLimit-Remaining", strconv.Itoa(remaining))
	}
	return nil
}

// authenticateToken identifies the caller by an OAuth access token (internal/oauth): a
// token refused is a 401 whose challenge points to the Protected Resource Metadata, one
// without the route's scope a 403 naming the scope it needs (RFC 6750 §3.1). Each subject
// has TOOLGATE_OAUTH_RATE_PER_MIN requests a minute, counted as a key's are, and its
// searches share TOOLGATE_KEY_SEARCH_UNITS as a key's do.
func (s *Server) authenticateToken(c echo.Context, next echo.HandlerFunc, token string, need auth.Scope) error {
	t, err := s.deps.OAuth.Verify(c.Request().Context(), token)
	if err != nil {
		var invalid *oauth.InvalidTokenError
		if errors.As(err, &invalid) {
			s.challenge(c, `error="invalid_token"`)
		}
		return err
	}
	caller := s.deps.OAuth.Caller(t)
	if !caller.Scope.Allows(need) {
		scope := s.deps.OAuth.ScopeFor(need == auth.ScopeAdmin)
		s.challenge(c, fmt.Sprintf(`error="insufficient_scope", scope=%q`, scope))
		return &Error{Status: http.StatusForbidden, Code: "insufficient_scope",
			Message: fmt.Sprintf("the access token lacks the scope %q this request needs", scope)}
	}
	perMin := s.deps.OAuth.RatePerMin()
	remaining, err := s.keys.UseSubject(c.Request().Context(), caller.Name, perMin)
	if err := rateLimited(c, perMin, remaining, err); err != nil {
		return err
	}
	setCaller(c, &caller)
	return next(c)
}

// challenge sets the WWW-Authenticate header of a refused credential: with OAuth on it names
// the Protected Resource Metadata of the requested resource (/mcp or the server), where a
// client learns which authorization server to ask for a token (RFC 9728 §5.1), and params
// (RFC 6750 §3) when given.
func (s *Server) challenge(c echo.Context, params string) {
	v := `Bearer realm="toolgate"`
	if s.deps.OAuth != nil {
		path := ""
		if c.Path() == oauth.MCPPath {
			path = oauth.MCPPath
		}
		v += fmt.Sprintf(`, resource_metadata=%q`, s.deps.OAuth.MetadataURL(path))
	}
	if params != "" {
		v += ", " + params
	}
	c.Response().Header().Set(echo.HeaderWWWAuthenticate, v)
}

// requestCaller is the caller the auth middleware found for the request. Every route that
// reaches a handler has one; a handler registered without the middleware fails here
// instead of acting for nobody in particular.
func requestCaller(c echo.Context) (auth.Caller, error) {
	caller := auth.FromContext(c.Request().Context())
	if caller == nil {
		return auth.Caller{}, errors.New("no caller on the request: the route lacks the auth middleware")
	}
	return *caller, nil
}

func setCaller(c echo.Context, caller *auth.Caller) {
	c.SetRequest(c.Request().WithContext(auth.WithCaller(c.Request().Context(), caller)))
}

// bearer returns the key of an "Authorization: Bearer <key>" header, or "".
func bearer(r *http.Request) string {
	scheme, key, ok := strings.Cut(r.Header.Get(echo.HeaderAuthorization), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(key)
}

// newKeys is the key store of deps: the given one (tests set a clock), or one on the
// control pool, which searches never hold.
func newKeys(deps Deps) *auth.Keys {
	if deps.Keys != nil {
		return deps.Keys
	}
	return auth.NewKeys(cmp.Or(deps.ControlPool, deps.Pool), time.Now)
}

// warnOpenMode says loudly, once per server, that nothing is protected.
func (s *Server) warnOpenMode() {
	if s.deps.Open {
		s.log.Warn("OPEN MODE: no API key is required and every caller is admin; never expose this server (unset TOOLGATE_OPEN, drop --open)")
	}
}
