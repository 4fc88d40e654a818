// Package upstreamauth makes toolgate an OAuth 2.1 client of the MCP servers it reaches: an
// mcp_http source configured for OAuth is authorized once by an operator (discovery of the
// server's authorization server by RFC 9728 and RFC 8414, dynamic client registration by
// RFC 7591 or a pre-registered client, authorization code with PKCE S256, state and the
// RFC 8707 resource), and its tokens are kept in PostgreSQL sealed with AES-256-GCM
// (Keyring), refreshed before they expire and when the server answers 401. A refresh the
// authorization server refuses marks the source refresh_failed, and nothing is sent upstream
// for it until an operator authorizes it again.
//
// Tokens never leave this package except as the Authorization header of a request to the
// source's own server: they are not logged, not shown by any API, and every text the
// authorization server chose (an error description) is cut down to printable ASCII and
// bounded before toolgate stores or shows it.
package upstreamauth

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/derrors"
)

// Authorization states of a source (source_oauth.state).
const (
	StateAuthorized    = "authorized"
	StateUnauthorized  = "unauthorized"
	StateRefreshFailed = "refresh_failed"
)

// CallbackPath is the path of the callback the authorization server redirects to.
const CallbackPath = "/v1/oauth/callback"

// Defaults of Settings.
const (
	DefaultPendingTTL    = 10 * time.Minute
	DefaultRefreshBefore = time.Minute
	requestTimeout       = 15 * time.Second
	maxResponseBytes     = 1 << 20
	// maxErrorLen bounds the error recorded and shown for a source.
	maxErrorLen = 300
)

// Settings configure the Manager.
type Settings struct {
	// Keys seal the tokens (TOOLGATE_SECRET_KEYS); nil refuses every OAuth source.
	Keys *Keyring
	// PublicURL is toolgate's public base URL (TOOLGATE_PUBLIC_URL), to which the
	// authorization server sends the operator back: PublicURL + CallbackPath.
	PublicURL string
	// PendingTTL is how long an authorization may take from its start to its callback.
	PendingTTL time.Duration
	// RefreshBefore is how long before its expiry an access token is refreshed.
	RefreshBefore time.Duration
	// Client reaches the authorization servers; nil: a client with a timeout that follows
	// no redirect. Tests wrap its transport to count requests.
	Client *http.Client
	// Now is the clock; nil: time.Now.
	Now func() time.Time
}

// Manager runs sources' authorizations and gives their tokens. It implements
// mcpclient.Authorizer and is safe for concurrent use.
type Manager struct {
	s    Settings
	pool *pgxpool.Pool
	log  *slog.Logger

	mu       sync.Mutex
	refreshs map[int64]*sync.Mutex // one refresh at a time per source in this process
}

// New returns the Manager of s on pool.
func New(pool *pgxpool.Pool, s Settings, log *slog.Logger) *Manager {
	if s.PendingTTL <= 0 {
		s.PendingTTL = DefaultPendingTTL
	}
	if s.RefreshBefore <= 0 {
		s.RefreshBefore = DefaultRefreshBefore
	}
	if s.Client == nil {
		s.Client = &http.Client{Timeout: requestTimeout}
	}
	client := *s.Client
	client.CheckRedirect = refuseRedirect
	if client.Transport == nil {
		// An explicit transport: the go-sdk's discovery would otherwise refuse every
		// private and loopback address, where an operator's own authorization server may
		// well be. The endpoints are checked by checkEndpoint instead.
		client.Transport = http.DefaultTransport
	}
	s.Client = &client
	if s.Now == nil {
		s.Now = time.Now
	}
	s.PublicURL = strings.TrimSuffix(s.PublicURL, "/")
	return &Manager{s: s, pool: pool, log: log.With("component", "upstreamauth"), refreshs: map[int64]*sync.Mutex{}}
}

// Ready is nil when OAuth sources can hold tokens: a secret key is configured.
func (m *Manager) Ready() error {
	if m.s.Keys == nil {
		return &KeysMissingError{}
	}
	return nil
}

// refuseRedirect: an authorization server's endpoints are called where its metadata says,
// never where a redirect points (a redirect could carry a code or a refresh token to any
// address).
func refuseRedirect(r *http.Request, _ []*http.Request) error {
	return fmt.Errorf("%s answered with a redirect, which toolgate does not follow", r.Response.Request.URL.Redacted())
}

// KeysMissingError: OAuth sources need TOOLGATE_SECRET_KEYS.
type KeysMissingError struct{}

func (e *KeysMissingError) Error() string {
	return "OAuth sources need a secret key to hold their tokens: set TOOLGATE_SECRET_KEYS (docs/upstream-oauth.md)"
}
func (e *KeysMissingError) Is(target error) bool { return target == derrors.Conflict }
func (e *KeysMissingError) Code() string         { return "secret_keys_missing" }

// PublicURLMissingError: an authorization needs TOOLGATE_PUBLIC_URL for its callback.
type PublicURLMissingError struct{}

func (e *PublicURLMissingError) Error() string {
	return "authorizing a source needs toolgate's public URL, where the authorization server sends the operator back: set TOOLGATE_PUBLIC_URL"
}
func (e *PublicURLMissingError) Is(target error) bool { return target == derrors.Conflict }
func (e *PublicURLMissingError) Code() string         { return "public_url_missing" }

// NotOAuthSourceError is a source that is not an mcp_http source configured for OAuth.
type NotOAuthSourceError struct{ Source string }

func (e *NotOAuthSourceError) Error() string {
	return fmt.Sprintf(`source %q is not an mcp_http source configured for OAuth (its config has no "oauth")`, e.Source)
}
func (e *NotOAuthSourceError) Is(target error) bool { return target == derrors.Conflict }
func (e *NotOAuthSourceError) Code() string         { return "not_oauth_source" }

// NotAuthorizedError is a source without usable tokens: never authorized, revoked, or its
// refresh refused. Nothing is sent to its server until an operator authorizes it.
type NotAuthorizedError struct {
	Source string
	State  string
	Reason string // why, when known; bounded and sanitized
}

func (e *NotAuthorizedError) Error() string {
	msg := fmt.Sprintf("source %q is not authorized (%s)", e.Source, e.State)
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg + "; an admin authorizes it with POST /v1/sources/" + e.Source + "/oauth/authorize"
}
func (e *NotAuthorizedError) Is(target error) bool { return target == derrors.Conflict }
func (e *NotAuthorizedError) Code() string         { return "source_not_authorized" }

// UnknownStateError is a callback whose state is not a pending authorization: never
// issued, already used, or expired.
type UnknownStateError struct{ Expired bool }

func (e *UnknownStateError) Error() string {
	if e.Expired {
		return "this authorization expired; start it again"
	}
	return "no pending authorization has this state (it was never issued by toolgate, or was already used)"
}
func (e *UnknownStateError) Is(target error) bool { return target == derrors.Forbidden }
func (e *UnknownStateError) Code() string         { return "unknown_state" }

// AuthorizationError is a step of an authorization that failed: discovery, registration,
// the authorization server refusing, or the code exchange. Its text is toolgate's, with at
// most the server's error code and a sanitized, bounded description.
type AuthorizationError struct {
	Step string
	Msg  string
	Err  error
}

func (e *AuthorizationError) Error() string        { return e.Step + ": " + e.Msg }
func (e *AuthorizationError) Unwrap() error        { return e.Err }
func (e *AuthorizationError) Is(target error) bool { return target == derrors.Conflict }
func (e *AuthorizationError) Code() string         { return "authorization_failed" }

// UnavailableError is an authorization server that could not be reached or failed (5xx)
// during a refresh: the source stays authorized and the refresh is tried again next time.
type UnavailableError struct{ Err error }

func (e *UnavailableError) Error() string {
	return "authorization server unavailable: " + e.Err.Error()
}
func (e *UnavailableError) Unwrap() error        { return e.Err }
func (e *UnavailableError) Is(target error) bool { return target == derrors.Unavailable }

// Sanitize makes a text an upstream chose fit to store and show: printable ASCII only
// (anything else becomes '?'), at most max bytes.
func Sanitize(s string, max int) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= max {
			b.WriteString("…")
			break
		}
		if r < 0x20 || r > 0x7e {
			r = '?'
		}
		b.WriteRune(r)
	}
	return b.String()
}

var errNoRefreshToken = errors.New("the authorization server gave no refresh token")
