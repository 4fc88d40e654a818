// Package auth identifies the caller of a request: API keys stored hashed, their scopes and
// the sources each key may see.
package auth

import (
	"context"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/internal/plan"
)

// Scope is what a key may do. An admin key may also search.
type Scope string

const (
	ScopeSearch Scope = "search"
	ScopeAdmin  Scope = "admin"
)

// Caller is who made a request.
type Caller struct {
	// Name is the key's name, or "open" in open mode, or "mcp:<session>" for MCP sessions,
	// or "oauth:<issuer>#<subject>" for a caller by OAuth access token (OAuthName).
	Name string
	// KeyID is the key's id, 0 for a caller without a key (open mode, stdio). Unlike the
	// name, which a new key may take once the old one is revoked, it names one key forever.
	KeyID int64
	Scope Scope
	// Sources limits the sources the caller may see; nil means every source.
	Sources []string
	// Tenant is whom the caller's searches teach and who learns from them (the memory
	// branch, docs/learning.md): its key's tenant, "key:<id>" for a key of no tenant, and ""
	// for the operator (no key, an admin key), whose searches teach every tenant.
	Tenant string
	// Plan is the query plan of the caller's searches that do not ask for one (its key's
	// default); empty means none.
	Plan plan.Mode
}

// OAuthName is the name of the caller of an OAuth access token of issuer for subject. No
// key's name has a colon, so it is no key's.
func OAuthName(issuer, subject string) string { return oauthPrefix + issuer + "#" + subject }

const oauthPrefix = "oauth:"

// Principal names the credential a caller holds, for whatever belongs to one credential
// (an MCP session, a share of searches): "key:<id>" for an API key (its id, since a name
// passes to a new key once the old one is revoked), its name for an OAuth token, and ""
// for a caller without a credential (open mode, stdio).
func (c *Caller) Principal() string {
	if c == nil {
		return ""
	}
	return PrincipalOf(c.KeyID, c.Name)
}

// PrincipalOf is the Principal of the caller of key id keyID (0: none) and name, as a
// stored MCP session records them.
func PrincipalOf(keyID int64, name string) string {
	if keyID != 0 {
		return "key:" + strconv.FormatInt(keyID, 10)
	}
	if strings.HasPrefix(name, oauthPrefix) {
		return name
	}
	return ""
}

type callerKey struct{}

// WithCaller returns ctx carrying c.
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// FromContext returns the caller of ctx, or nil when none was set (internal calls).
func FromContext(ctx context.Context) *Caller {
	c, _ := ctx.Value(callerKey{}).(*Caller)
	return c
}
