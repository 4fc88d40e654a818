package config

import (
	"github.com/toolgate/toolgate/internal/upstreamauth"
)

// readUpstreamAuth reads the settings of toolgate as an OAuth client of its mcp_http sources
// (docs/upstream-oauth.md): the keys that seal their tokens (none by default: OAuth sources
// are refused) and the public URL the authorization servers send the operator back to
// (by default TOOLGATE_OAUTH_RESOURCE, toolgate's public URL when it is a protected
// resource too).
func (r *reader) readUpstreamAuth(c *Config) {
	keys, err := upstreamauth.ParseKeys(r.getenv("TOOLGATE_SECRET_KEYS"))
	if err != nil {
		// the value is a secret: never quoted back
		r.fail("TOOLGATE_SECRET_KEYS", "***", err.Error())
	}
	public := r.str("TOOLGATE_PUBLIC_URL", c.OAuth.Resource)
	if public != "" {
		if reason := checkOAuthURL(public); reason != "" {
			r.fail("TOOLGATE_PUBLIC_URL", public, reason)
		}
	}
	c.UpstreamAuth = upstreamauth.Settings{Keys: keys, PublicURL: public}
}
