package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/derrors"
)

// signatureAlgorithms are the algorithms a token may be signed with: the asymmetric ones
// (a shared-secret HS256 token could be forged by anyone holding the secret, and "none"
// is no signature).
var signatureAlgorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// InvalidTokenError is a token this server does not accept; the caller gets a new one.
// Reason never holds the token.
type InvalidTokenError struct{ Reason string }

func (e *InvalidTokenError) Error() string        { return "invalid access token: " + e.Reason }
func (e *InvalidTokenError) Is(target error) bool { return target == derrors.Unauthorized }

// Code is the OAuth error code of RFC 6750 §3.1.
func (e *InvalidTokenError) Code() string { return "invalid_token" }

// UnavailableError is a token signed by a trusted issuer that cannot be checked now: the
// issuer's metadata or keys could not be read, or its metadata does not name it as issuer.
// The caller's token may be good: it tries again later.
type UnavailableError struct {
	Issuer string
	Err    error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("authorization server %s: %v", e.Issuer, e.Err)
}
func (e *UnavailableError) Unwrap() error        { return e.Err }
func (e *UnavailableError) Is(target error) bool { return target == derrors.Unavailable }
func (e *UnavailableError) Code() string         { return "authorization_server_unavailable" }

// PublicMessage leaves out the cause (an address, a status), which is logged.
func (e *UnavailableError) PublicMessage() string {
	return fmt.Sprintf("the keys of authorization server %s cannot be read now, so the token cannot be checked; try again shortly", e.Issuer)
}

// Token is what a verified access token says.
type Token struct {
	Issuer  string
	Subject string
	Scopes  []string
	// Sources is the sources claim; nil when the token has none.
	Sources []string
	// Tenant is the tenant claim; "" when the token has none.
	Tenant string
	Expiry time.Time
}

// Verifier checks access tokens. It is safe for concurrent use.
type Verifier struct {
	s       Settings
	log     *slog.Logger
	issuers map[string]*issuer
}

// NewVerifier returns the verifier of s (whose Issuers are not empty).
func NewVerifier(s Settings, log *slog.Logger) *Verifier {
	s = s.withDefaults()
	v := &Verifier{s: s, log: log.With("component", "oauth"), issuers: map[string]*issuer{}}
	for _, iss := range s.Issuers {
		v.issuers[iss] = &issuer{url: iss, s: &v.s, log: v.log}
	}
	return v
}

// claims are the claims read from a token.
type claims struct {
	jwt.Claims
	Scope string   `json:"scope"` // RFC 9068 §2.2.3: space-separated
	Scp   []string `json:"scp"`   // the array some servers send instead
}

// Verify checks raw and returns what it says; its errors are *InvalidTokenError (the
// token is refused) or *UnavailableError (it cannot be checked now). A token that is not a
// JWT is introspected when Settings.Introspection is on (introspect.go).
func (v *Verifier) Verify(ctx context.Context, raw string) (*Token, error) {
	tok, err := jwt.ParseSigned(raw, signatureAlgorithms)
	if err != nil {
		if v.s.Introspection.Enabled() {
			return v.introspect(ctx, raw)
		}
		return nil, &InvalidTokenError{"not a JWT signed with an asymmetric algorithm"}
	}
	if len(tok.Headers) != 1 {
		return nil, &InvalidTokenError{"want exactly one signature"}
	}
	var unverified jwt.Claims
	if err := tok.UnsafeClaimsWithoutVerification(&unverified); err != nil {
		return nil, &InvalidTokenError{"unreadable claims"}
	}
	is := v.issuers[unverified.Issuer]
	if is == nil {
		return nil, &InvalidTokenError{fmt.Sprintf("issuer %q is not trusted by this server", unverified.Issuer)}
	}
	h := tok.Headers[0]
	keys, err := is.keys(ctx, h.KeyID)
	if err != nil {
		return nil, err
	}
	var c claims
	var extra map[string]any
	verified := false
	for _, k := range keys {
		if k.Algorithm != "" && k.Algorithm != h.Algorithm {
			continue
		}
		if tok.Claims(k.Key, &c, &extra) == nil {
			verified = true
			break
		}
	}
	if !verified {
		return nil, &InvalidTokenError{"signature does not verify with the issuer's keys"}
	}
	if err := v.validate(&c.Claims); err != nil {
		return nil, err
	}
	t := &Token{Issuer: c.Issuer, Subject: c.Subject, Scopes: c.Scp, Expiry: c.Expiry.Time()}
	if c.Scope != "" {
		t.Scopes = strings.Fields(c.Scope)
	}
	if err := v.readClaims(t, extra); err != nil {
		return nil, err
	}
	return t, nil
}

// readClaims reads the sources and tenant claims of a token (or of its introspection) into t.
func (v *Verifier) readClaims(t *Token, claims map[string]any) error {
	if raw, ok := claims[v.s.SourcesClaim]; ok {
		var err error
		if t.Sources, err = stringList(raw); err != nil {
			return &InvalidTokenError{fmt.Sprintf("claim %s: %v", v.s.SourcesClaim, err)}
		}
	}
	if raw, ok := claims[v.s.TenantClaim]; ok {
		tenant, isString := raw.(string)
		if !isString || !auth.ValidTenant(tenant) {
			return &InvalidTokenError{fmt.Sprintf("claim %s: want a tenant name (1-64 characters of A-Z a-z 0-9 . _ -)", v.s.TenantClaim)}
		}
		t.Tenant = tenant
	}
	return nil
}

// validate checks the registered claims of a token whose signature verified.
func (v *Verifier) validate(c *jwt.Claims) error {
	if c.Expiry == nil {
		return &InvalidTokenError{"no expiry (exp)"}
	}
	if c.Subject == "" {
		return &InvalidTokenError{"no subject (sub)"}
	}
	err := c.ValidateWithLeeway(jwt.Expected{Time: v.s.Now()}, v.s.Leeway)
	switch {
	case errors.Is(err, jwt.ErrExpired):
		return &InvalidTokenError{"expired"}
	case errors.Is(err, jwt.ErrNotValidYet):
		return &InvalidTokenError{"not valid yet (nbf)"}
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return &InvalidTokenError{"issued in the future (iat)"}
	case err != nil:
		return &InvalidTokenError{"claims do not validate"}
	}
	// RFC 8707: the token must have been issued for this server (its root or its /mcp), so
	// that a token for another resource of the same issuer is not good here.
	aud := []string(c.Audience)
	if !oauthex.MatchesResource(aud, v.s.Resource) && !oauthex.MatchesResource(aud, v.s.Resource+MCPPath) {
		return &InvalidTokenError{fmt.Sprintf("audience %q is not this server (%s)", aud, v.s.Resource)}
	}
	return nil
}

// stringList reads a claim that is an array of strings or one space-separated string.
func stringList(v any) ([]string, error) {
	switch x := v.(type) {
	case string:
		return strings.Fields(x), nil
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, errors.New("want an array of strings")
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, errors.New("want an array of strings or a space-separated string")
}

// Caller is the caller a token makes: an admin caller when it has the admin scope, a
// search caller (limited to the token's sources, when it names some, of the token's
// tenant, when it names one) when it has the search scope, and a caller of no scope otherwise, refused by every route. Its name is
// "oauth:<issuer>#<subject>", which owns its MCP sessions and its share of searches.
func (v *Verifier) Caller(t *Token) auth.Caller {
	c := auth.Caller{Name: auth.OAuthName(t.Issuer, t.Subject)}
	switch {
	case slices.Contains(t.Scopes, v.s.ScopeAdmin):
		c.Scope = auth.ScopeAdmin
	case slices.Contains(t.Scopes, v.s.ScopeSearch):
		c.Scope = auth.ScopeSearch
		c.Sources = t.Sources
		c.Tenant = t.Tenant
	}
	return c
}

// issuerMetadata is the part of an authorization server's metadata this server reads.
type issuerMetadata struct {
	Issuer                string `json:"issuer"`
	JWKSURI               string `json:"jwks_uri"`
	IntrospectionEndpoint string `json:"introspection_endpoint"`
}

// decodeJSON decodes a document of at most maxDocumentBytes.
func decodeJSON(data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return nil
}
