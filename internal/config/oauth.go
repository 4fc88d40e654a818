package config

import (
	"net/url"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/internal/httpguard"
	"github.com/toolgate/toolgate/internal/oauth"
)

// readOAuth reads the settings of toolgate as an OAuth protected resource
// (docs/auth.md#oauth): the issuers whose access tokens are accepted beside API keys (none
// by default: API keys only), this server's resource identifier, which tokens must be
// issued for, and how scopes and claims map to a caller.
func (r *reader) readOAuth(c *Config) {
	s := oauth.Settings{
		Resource:     r.str("TOOLGATE_OAUTH_RESOURCE", ""),
		ScopeSearch:  r.str("TOOLGATE_OAUTH_SCOPE_SEARCH", oauth.DefaultScopeSearch),
		ScopeAdmin:   r.str("TOOLGATE_OAUTH_SCOPE_ADMIN", oauth.DefaultScopeAdmin),
		SourcesClaim: r.str("TOOLGATE_OAUTH_SOURCES_CLAIM", oauth.DefaultSourcesClaim),
		TenantClaim:  r.str("TOOLGATE_OAUTH_TENANT_CLAIM", oauth.DefaultTenantClaim),
		RatePerMin:   r.integer("TOOLGATE_OAUTH_RATE_PER_MIN", oauth.DefaultRatePerMin, 0, 1_000_000),
		Leeway:       r.duration("TOOLGATE_OAUTH_LEEWAY", oauth.DefaultLeeway),
		Refresh:      r.duration("TOOLGATE_OAUTH_JWKS_REFRESH", oauth.DefaultRefresh),
	}
	issuers := r.getenv("TOOLGATE_OAUTH_ISSUERS")
	for _, iss := range strings.FieldsFunc(issuers, func(r rune) bool { return r == ',' || r == ' ' }) {
		if reason := checkOAuthURL(iss); reason != "" {
			r.fail("TOOLGATE_OAUTH_ISSUERS", issuers, iss+": "+reason)
		}
		s.Issuers = append(s.Issuers, iss)
	}
	switch {
	case !s.Enabled() && s.Resource != "":
		r.fail("TOOLGATE_OAUTH_RESOURCE", s.Resource, "set TOOLGATE_OAUTH_ISSUERS too: without an issuer no token is accepted")
	case s.Enabled() && s.Resource == "":
		r.fail("TOOLGATE_OAUTH_RESOURCE", "", "required with TOOLGATE_OAUTH_ISSUERS: this server's public base URL (e.g. https://toolgate.example.com), which tokens must be issued for")
	case s.Enabled():
		if reason := checkOAuthURL(s.Resource); reason != "" {
			r.fail("TOOLGATE_OAUTH_RESOURCE", s.Resource, reason)
		}
	}
	s.Introspection = oauth.Introspection{
		Issuer:       r.str("TOOLGATE_OAUTH_INTROSPECTION_ISSUER", ""),
		ClientID:     r.str("TOOLGATE_OAUTH_INTROSPECTION_CLIENT_ID", ""),
		ClientSecret: r.str("TOOLGATE_OAUTH_INTROSPECTION_CLIENT_SECRET", ""),
	}
	switch in := s.Introspection; {
	case in.Enabled() && !slices.Contains(s.Issuers, in.Issuer):
		r.fail("TOOLGATE_OAUTH_INTROSPECTION_ISSUER", in.Issuer, "must be one of TOOLGATE_OAUTH_ISSUERS: an opaque token is sent to that issuer only")
	case in.Enabled() && (in.ClientID == "" || in.ClientSecret == ""):
		r.fail("TOOLGATE_OAUTH_INTROSPECTION_CLIENT_ID", in.ClientID, "set it and TOOLGATE_OAUTH_INTROSPECTION_CLIENT_SECRET with TOOLGATE_OAUTH_INTROSPECTION_ISSUER: toolgate's client at that issuer")
	case !in.Enabled() && (in.ClientID != "" || in.ClientSecret != ""):
		r.fail("TOOLGATE_OAUTH_INTROSPECTION_ISSUER", "", "set it with TOOLGATE_OAUTH_INTROSPECTION_CLIENT_ID: the issuer that introspects opaque tokens")
	}
	if s.ScopeSearch == s.ScopeAdmin {
		r.fail("TOOLGATE_OAUTH_SCOPE_ADMIN", s.ScopeAdmin, "must differ from TOOLGATE_OAUTH_SCOPE_SEARCH")
	}
	c.OAuth = s
	c.CORSOrigins = r.origins("TOOLGATE_CORS_ORIGINS")
}

// origins reads a comma- or space-separated list of web origins (httpguard.ParseOrigin).
func (r *reader) origins(name string) httpguard.Origins {
	v := r.getenv(name)
	var out httpguard.Origins
	for _, o := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }) {
		norm, err := httpguard.ParseOrigin(o)
		if err != nil {
			r.fail(name, v, err.Error())
			return nil
		}
		out = append(out, norm)
	}
	return out
}

// checkOAuthURL returns why u cannot be an issuer or resource identifier, or "": an
// absolute https URL (http only on a loopback host, for development), without query or
// fragment (RFC 8414 §2, RFC 8707 §2).
func checkOAuthURL(u string) string {
	p, err := url.Parse(u)
	switch {
	case err != nil || p.Host == "":
		return "want an absolute URL such as https://auth.example.com"
	case p.RawQuery != "" || p.Fragment != "":
		return "want a URL without query or fragment"
	case p.Scheme == "https":
		return ""
	case p.Scheme == "http" && httpguard.IsLoopback(p.Host):
		return ""
	}
	return "want https (http only on a loopback address)"
}
