// Package oauth makes toolgate an OAuth 2.1 protected resource, as the MCP authorization
// specification asks of a remote MCP server: it verifies the JWT access tokens of the
// authorization servers it trusts (issuer, audience bound to this resource by RFC 8707,
// lifetime, signature by the issuer's published keys), maps their scopes and claims to the
// caller an API key would make, and describes itself in Protected Resource Metadata
// (RFC 9728) so that clients find where to get a token.
//
// Each issuer's metadata (RFC 8414, or OpenID discovery) is read once, on the first token it
// signed; its key set (JWKS) is cached and read again when a token names a key it lacks (a
// rotation), at most once per Settings.Refresh.
package oauth

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/toolgate/toolgate/internal/auth"
)

// Defaults of Settings.
const (
	DefaultScopeSearch  = "toolgate:search"
	DefaultScopeAdmin   = "toolgate:admin"
	DefaultSourcesClaim = "toolgate_sources"
	DefaultTenantClaim  = "toolgate_tenant"
	DefaultLeeway       = 30 * time.Second
	// DefaultRatePerMin is a subject's requests a minute, as a key created without a limit.
	DefaultRatePerMin = auth.DefaultRatePerMin
	DefaultRefresh    = time.Minute
	// fetchTimeout bounds one read of an issuer's metadata or keys.
	fetchTimeout = 10 * time.Second
	// maxDocumentBytes bounds a metadata or key set document.
	maxDocumentBytes = 1 << 20
)

// Settings are the resource server's settings (TOOLGATE_OAUTH_*, docs/auth.md#oauth).
type Settings struct {
	// Issuers are the authorization servers whose tokens are accepted, by issuer identifier
	// (RFC 8414: the URL their metadata names as "issuer"); none turns OAuth off.
	Issuers []string
	// Resource is this server's resource identifier (RFC 8707, RFC 9728): its public base
	// URL, e.g. https://toolgate.example.com. A token's audience must name it, or its /mcp.
	Resource string
	// ScopeSearch and ScopeAdmin are the OAuth scopes that make a caller a search or an
	// admin caller.
	ScopeSearch, ScopeAdmin string
	// SourcesClaim is the claim that limits a search caller to some sources (an array of
	// source names, or one space-separated string); absent, it sees every source.
	SourcesClaim string
	// TenantClaim is the claim that names a search caller's tenant (docs/learning.md): it
	// learns from what that tenant's keys taught and has that tenant's curations; absent,
	// it has the operator's alone.
	TenantClaim string
	// Introspection checks opaque (non-JWT) tokens at one issuer (RFC 7662); its zero value
	// refuses them.
	Introspection Introspection
	// RatePerMin is the most requests a minute of one subject (of one issuer); 0 is no limit.
	RatePerMin int
	// Leeway is the clock skew allowed in exp, nbf and iat.
	Leeway time.Duration
	// Refresh is the least time between two reads of one issuer's keys or metadata, so
	// that tokens naming unknown keys cannot make toolgate hammer the issuer.
	Refresh time.Duration
	// Client reads metadata and keys; nil is a client with a 10 s timeout.
	Client *http.Client
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Enabled reports whether any issuer is trusted.
func (s Settings) Enabled() bool { return len(s.Issuers) > 0 }

func (s Settings) withDefaults() Settings {
	s.ScopeSearch = cmp.Or(s.ScopeSearch, DefaultScopeSearch)
	s.ScopeAdmin = cmp.Or(s.ScopeAdmin, DefaultScopeAdmin)
	s.SourcesClaim = cmp.Or(s.SourcesClaim, DefaultSourcesClaim)
	s.TenantClaim = cmp.Or(s.TenantClaim, DefaultTenantClaim)
	if s.Leeway == 0 {
		s.Leeway = DefaultLeeway
	}
	if s.Refresh == 0 {
		s.Refresh = DefaultRefresh
	}
	if s.Client == nil {
		s.Client = &http.Client{Timeout: fetchTimeout}
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	s.Resource = strings.TrimSuffix(s.Resource, "/")
	return s
}

// MCPPath is the path of the MCP endpoint, a resource of its own in the metadata.
const MCPPath = "/mcp"

// MetadataPath is the well-known path of the Protected Resource Metadata of the server's
// root; MetadataPath+MCPPath is that of /mcp (RFC 9728 §3.1).
const MetadataPath = "/.well-known/oauth-protected-resource"

// Metadata is the Protected Resource Metadata of the resource at path ("" for the server,
// MCPPath for /mcp).
func (v *Verifier) Metadata(path string) *oauthex.ProtectedResourceMetadata {
	return &oauthex.ProtectedResourceMetadata{
		Resource:               v.s.Resource + path,
		AuthorizationServers:   slices.Clone(v.s.Issuers),
		ScopesSupported:        []string{v.s.ScopeSearch, v.s.ScopeAdmin},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "toolgate",
	}
}

// MetadataURL is the URL of the metadata of the resource at path, for the
// WWW-Authenticate challenge of a request to it.
func (v *Verifier) MetadataURL(path string) string {
	return v.s.Resource + MetadataPath + path
}

// RatePerMin is the most requests a minute of one subject; 0 is no limit.
func (v *Verifier) RatePerMin() int { return v.s.RatePerMin }

// ScopeFor is the OAuth scope that grants what an admin (admin true) or a search caller may do.
func (v *Verifier) ScopeFor(admin bool) string {
	if admin {
		return v.s.ScopeAdmin
	}
	return v.s.ScopeSearch
}
