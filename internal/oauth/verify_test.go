package oauth_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/derrors"
	"github.com/toolgate/toolgate/internal/mcptest"
	"github.com/toolgate/toolgate/internal/oauth"
)

const (
	resource      = "http://127.0.0.1:8080"
	otherResource = "http://127.0.0.1:9999/other"
)

var (
	searchClient = mcptest.AuthClient{ID: "agent", Secret: "agent-secret", Claims: map[string]any{"toolgate_sources": []string{"alpha", "beta"}}}
	adminClient  = mcptest.AuthClient{ID: "ops", Secret: "ops-secret"}
)

// clock is a settable test clock.
type clock struct{ offset atomic.Int64 }

func (c *clock) now() time.Time                           { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *clock) advance(d time.Duration)                  { c.offset.Add(int64(d)) }
func newClock() *clock                                    { return &clock{} }
func (c *clock) settings(s oauth.Settings) oauth.Settings { s.Now = c.now; return s }

// countingTransport counts the requests of each path it forwards to the network.
type countingTransport struct {
	mu    sync.Mutex
	paths map[string]int
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	if c.paths == nil {
		c.paths = map[string]int{}
	}
	c.paths[r.URL.Path]++
	c.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

func (c *countingTransport) count(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.paths[path]
}

func startAS(t *testing.T) *mcptest.AuthServer {
	return mcptest.StartAuthServer(t, mcptest.AuthServerConfig{
		Resources: []string{resource, resource + "/mcp", otherResource},
		Clients:   []mcptest.AuthClient{searchClient, adminClient},
	})
}

func invalid(t *testing.T, err error, reason string) {
	t.Helper()
	var it *oauth.InvalidTokenError
	if !errors.As(err, &it) || !errors.Is(err, derrors.Unauthorized) || !strings.Contains(it.Reason, reason) {
		t.Fatalf("err = %v, want an invalid token error about %q", err, reason)
	}
}

// TestVerifyTokensOfARealAuthorizationServer checks the tokens of oidc-provider: a good one
// becomes a caller of its scope and sources; expired, for another resource, from an
// issuer not trusted, or malformed, each is refused with its reason.
func TestVerifyTokensOfARealAuthorizationServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	as := startAS(t)
	stranger := startAS(t) // a real server this toolgate does not trust
	clk := newClock()
	v := oauth.NewVerifier(clk.settings(oauth.Settings{Issuers: []string{as.Issuer}, Resource: resource}), slog.New(slog.DiscardHandler))

	tok, err := v.Verify(ctx, as.ClientToken(t, searchClient, resource, "toolgate:search"))
	if err != nil {
		t.Fatal(err)
	}
	c := v.Caller(tok)
	if c.Scope != auth.ScopeSearch || !slices.Equal(c.Sources, []string{"alpha", "beta"}) || c.Name != "oauth:"+as.Issuer+"#agent" || c.Principal() != c.Name {
		t.Fatalf("search token made caller %+v", c)
	}
	// a token for /mcp is as good: the resource identifier of the MCP endpoint
	tok, err = v.Verify(ctx, as.ClientToken(t, adminClient, resource+"/mcp", "toolgate:admin toolgate:search"))
	if err != nil {
		t.Fatal(err)
	}
	if c := v.Caller(tok); c.Scope != auth.ScopeAdmin || c.Sources != nil {
		t.Fatalf("admin token made caller %+v", c)
	}
	tok, err = v.Verify(ctx, as.ClientToken(t, searchClient, resource, ""))
	if err != nil {
		t.Fatal(err)
	}
	if c := v.Caller(tok); c.Scope != "" || c.Scope.Allows(auth.ScopeSearch) {
		t.Fatalf("token without scope made caller %+v", c)
	}

	_, err = v.Verify(ctx, as.ClientToken(t, searchClient, otherResource, "toolgate:search"))
	invalid(t, err, "audience")
	_, err = v.Verify(ctx, stranger.ClientToken(t, searchClient, resource, "toolgate:search"))
	invalid(t, err, "not trusted")
	for _, bad := range []string{"", "garbage", "a.b.c", hsToken(t, as.Issuer)} {
		_, err = v.Verify(ctx, bad)
		invalid(t, err, "not a JWT signed with an asymmetric algorithm")
	}
	// a token signed by a key of the right issuer's name but not among its keys
	_, err = v.Verify(ctx, forged(t, as.Issuer, "kid-of-nobody"))
	invalid(t, err, "not among the issuer's keys")

	good := as.ClientToken(t, searchClient, resource, "toolgate:search")
	clk.advance(time.Hour + oauth.DefaultLeeway + time.Second) // the server's tokens live an hour
	_, err = v.Verify(ctx, good)
	invalid(t, err, "expired")
}

// TestVerifyRotatedKey: after the authorization server rotates its signing key, a token
// of the new key is accepted once the key set is read again, which happens at most once
// per Refresh however many tokens name an unknown key.
func TestVerifyRotatedKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	as := startAS(t)
	clk := newClock()
	ct := &countingTransport{}
	v := oauth.NewVerifier(clk.settings(oauth.Settings{Issuers: []string{as.Issuer}, Resource: resource, Refresh: time.Minute,
		Client: &http.Client{Transport: ct}}), slog.New(slog.DiscardHandler))
	if _, err := v.Verify(ctx, as.ClientToken(t, searchClient, resource, "toolgate:search")); err != nil {
		t.Fatal(err)
	}
	if n := ct.count("/jwks"); n != 1 {
		t.Fatalf("key set read %d times, want 1", n)
	}
	as.Rotate(t)
	rotated := as.ClientToken(t, searchClient, resource, "toolgate:search")
	// read less than Refresh ago: not read again, the token is refused for now
	for range 3 {
		_, err := v.Verify(ctx, rotated)
		invalid(t, err, "not among the issuer's keys")
	}
	if n := ct.count("/jwks"); n != 1 {
		t.Fatalf("key set read %d times within Refresh, want 1", n)
	}
	clk.advance(time.Minute)
	// a burst of requests carrying it reads the key set once
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			_, err := v.Verify(ctx, rotated)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("token of the rotated key after the refresh: %v", err)
		}
	}
	if n := ct.count("/jwks"); n != 2 {
		t.Fatalf("key set read %d times, want 2", n)
	}
	if _, err := v.Verify(ctx, as.ClientToken(t, searchClient, resource, "toolgate:search")); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyIssuerUnavailable: a trusted issuer whose metadata cannot be read, or whose
// metadata names another issuer (RFC 8414 §3.3), makes its tokens uncheckable: a clear
// error of the Unavailable category naming the issuer, read again at most once per Refresh.
func TestVerifyIssuerUnavailable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	as := startAS(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String()
	ln.Close()
	// the same server by another name: its metadata names 127.0.0.1, not localhost
	liar := strings.Replace(as.Issuer, "127.0.0.1", "localhost", 1)
	ct := &countingTransport{}
	v := oauth.NewVerifier(oauth.Settings{Issuers: []string{as.Issuer, down, liar}, Resource: resource, Client: &http.Client{Transport: ct}},
		slog.New(slog.DiscardHandler))

	var unavailable *oauth.UnavailableError
	_, err = v.Verify(ctx, forged(t, down, "k1"))
	if !errors.As(err, &unavailable) || unavailable.Issuer != down || !errors.Is(err, derrors.Unavailable) ||
		!strings.Contains(unavailable.PublicMessage(), down) {
		t.Fatalf("unreachable issuer: %v", err)
	}
	_, err = v.Verify(ctx, forged(t, liar, "k1"))
	if !errors.As(err, &unavailable) || unavailable.Issuer != liar || !errors.Is(err, oauth.ErrIssuerMismatch) {
		t.Fatalf("issuer whose metadata names another: %v", err)
	}
	reads := ct.count("/.well-known/oauth-authorization-server")
	if _, err := v.Verify(ctx, forged(t, liar, "k2")); !errors.Is(err, oauth.ErrIssuerMismatch) {
		t.Fatalf("again: %v", err)
	}
	if n := ct.count("/.well-known/oauth-authorization-server"); n != reads {
		t.Fatalf("metadata read again within Refresh: %d reads, then %d", reads, n)
	}
	// the honest issuer is not affected
	if _, err := v.Verify(ctx, as.ClientToken(t, searchClient, resource, "toolgate:search")); err != nil {
		t.Fatal(err)
	}
}

// forged is a well-formed token claiming iss for this resource, signed by a key of its own named kid.
func forged(t *testing.T, iss, kid string) string {
	return mcptest.ForgedToken(t, iss, kid, resource)
}

// hsToken is a token claiming iss signed with a shared secret (HS256), which anyone
// holding the secret could forge.
func hsToken(t *testing.T, iss string) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte("0123456789abcdef0123456789abcdef")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sign(t, signer, iss)
}

func sign(t *testing.T, signer jose.Signer, iss string) string {
	t.Helper()
	raw, err := jwt.Signed(signer).Claims(jwt.Claims{Issuer: iss, Subject: "someone", Audience: jwt.Audience{resource},
		Expiry: jwt.NewNumericDate(time.Now().Add(time.Hour))}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestTokenTenantClaim: a search token's toolgate_tenant claim makes its caller that
// tenant's, an admin token's is ignored (the operator has no tenant), and a claim that is
// not a tenant name — a key's own tenant "key:<id>" above all — refuses the token.
func TestTokenTenantClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	acme := mcptest.AuthClient{ID: "acme-agent", Secret: "s1", Claims: map[string]any{"toolgate_tenant": "acme"}}
	impostor := mcptest.AuthClient{ID: "impostor", Secret: "s2", Claims: map[string]any{"toolgate_tenant": "key:1"}}
	as := mcptest.StartAuthServer(t, mcptest.AuthServerConfig{Resources: []string{resource}, Clients: []mcptest.AuthClient{acme, impostor, searchClient}})
	v := oauth.NewVerifier(oauth.Settings{Issuers: []string{as.Issuer}, Resource: resource}, slog.New(slog.DiscardHandler))
	for _, tc := range []struct {
		client mcptest.AuthClient
		scope  string
		tenant string
	}{
		{acme, "toolgate:search", "acme"},
		{acme, "toolgate:admin", ""},
		{searchClient, "toolgate:search", ""},
	} {
		tok, err := v.Verify(ctx, as.ClientToken(t, tc.client, resource, tc.scope))
		if err != nil {
			t.Fatal(err)
		}
		if c := v.Caller(tok); c.Tenant != tc.tenant {
			t.Errorf("%s with %s: tenant %q, want %q", tc.client.ID, tc.scope, c.Tenant, tc.tenant)
		}
	}
	_, err := v.Verify(ctx, as.ClientToken(t, impostor, resource, "toolgate:search"))
	invalid(t, err, "claim toolgate_tenant")
}
