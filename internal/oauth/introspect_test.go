package oauth_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/derrors"
	"github.com/toolgate/toolgate/internal/mcptest"
	"github.com/toolgate/toolgate/internal/oauth"
)

// TestVerifyOpaqueTokenByIntrospection: with introspection on, an opaque token of
// oidc-provider is checked at its introspection endpoint and makes the caller its scope
// and claims say (a client-credentials token's subject is its client); a token for another
// resource, one the server does not know, and an expired one are refused; wrong client
// credentials make the endpoint unavailable, not the token invalid; without introspection
// an opaque token is refused as before.
func TestVerifyOpaqueTokenByIntrospection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	toolgate := mcptest.AuthClient{ID: "toolgate", Secret: "toolgate-secret"}
	as := mcptest.StartAuthServer(t, mcptest.AuthServerConfig{
		Resources:       []string{resource, otherResource},
		OpaqueResources: []string{resource, otherResource},
		Clients:         []mcptest.AuthClient{searchClient, adminClient, toolgate},
	})
	clk := newClock()
	settings := func(secret string) oauth.Settings {
		return clk.settings(oauth.Settings{Issuers: []string{as.Issuer}, Resource: resource,
			Introspection: oauth.Introspection{Issuer: as.Issuer, ClientID: toolgate.ID, ClientSecret: secret}})
	}
	v := oauth.NewVerifier(settings(toolgate.Secret), slog.New(slog.DiscardHandler))

	opaque := as.ClientToken(t, searchClient, resource, "toolgate:search")
	if strings.Count(opaque, ".") == 2 {
		t.Fatalf("the server issued a JWT, not an opaque token: %.20s…", opaque)
	}
	tok, err := v.Verify(ctx, opaque)
	if err != nil {
		t.Fatal(err)
	}
	c := v.Caller(tok)
	if c.Scope != auth.ScopeSearch || !slices.Equal(c.Sources, []string{"alpha", "beta"}) || c.Name != "oauth:"+as.Issuer+"#agent" {
		t.Fatalf("opaque search token made caller %+v", c)
	}
	tok, err = v.Verify(ctx, as.ClientToken(t, adminClient, resource, "toolgate:admin"))
	if err != nil || v.Caller(tok).Scope != auth.ScopeAdmin {
		t.Fatalf("opaque admin token: %+v %v", tok, err)
	}

	_, err = v.Verify(ctx, as.ClientToken(t, searchClient, otherResource, "toolgate:search"))
	invalid(t, err, "audience")
	_, err = v.Verify(ctx, "an-opaque-token-nobody-issued")
	invalid(t, err, "not active")

	clk.advance(time.Hour + oauth.DefaultLeeway + time.Second)
	_, err = v.Verify(ctx, opaque)
	invalid(t, err, "expired")

	wrongSecret := oauth.NewVerifier(settings("not-the-secret"), slog.New(slog.DiscardHandler))
	_, err = wrongSecret.Verify(ctx, as.ClientToken(t, searchClient, resource, "toolgate:search"))
	var un *oauth.UnavailableError
	if !errors.As(err, &un) || !errors.Is(err, derrors.Unavailable) {
		t.Fatalf("introspection with a wrong client secret: %v, want unavailable", err)
	}
	off := oauth.NewVerifier(clk.settings(oauth.Settings{Issuers: []string{as.Issuer}, Resource: resource}), slog.New(slog.DiscardHandler))
	_, err = off.Verify(ctx, as.ClientToken(t, searchClient, resource, "toolgate:search"))
	invalid(t, err, "not a JWT")
}
