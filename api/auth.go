package api

import (
	"cmp"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/internal/auth"
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
	"GET /ui":                   accessPublic,
	"GET /ui/*":                 accessPublic,
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

// authenticate identifies the caller by its Bearer key, checks the route's scope and the
// key's rate limit, and puts the caller in the request context. In open mode every request
// is the admin caller "open".
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
		key, err := s.keys.Verify(ctx, bearer(c.Request()))
		if err != nil {
			if errors.Is(err, auth.ErrInvalidKey) || errors.Is(err, auth.ErrRevokedKey) {
				c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="toolgate"`)
			}
			return err
		}
		needScope := auth.ScopeAdmin
		if need == accessSearch {
			needScope = auth.ScopeSearch
		}
		if !key.Scope.Allows(needScope) {
			return &auth.ScopeError{Have: key.Scope, Need: needScope}
		}
		remaining, err := s.keys.Use(ctx, key)
		var rl *auth.RateLimitError
		if errors.As(err, &rl) {
			h := c.Response().Header()
			h.Set("Retry-After", strconv.Itoa(auth.RetryAfterSeconds(rl.RetryAfter)))
			h.Set("RateLimit-Limit", strconv.Itoa(rl.Limit))
			h.Set("RateLimit-Remaining", "0")
			return err
		}
		if err != nil {
			return err
		}
		if remaining >= 0 {
			c.Response().Header().Set("RateLimit-Limit", strconv.Itoa(key.RatePerMin))
			c.Response().Header().Set("RateLimit-Remaining", strconv.Itoa(remaining))
		}
		setCaller(c, key.Caller())
		return next(c)
	}
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
