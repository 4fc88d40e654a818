package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestOAuthSettings: OAuth is off by default; issuers need the resource identifier, and
// both must be https URLs (http on loopback) without query or fragment.
func TestOAuthSettings(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil || c.OAuth.Enabled() {
		t.Fatalf("default: %+v %v", c.OAuth, err)
	}
	c, err = Load(env(map[string]string{
		"TOOLGATE_OAUTH_ISSUERS":  "https://auth.example.com, http://127.0.0.1:9000/realms/x",
		"TOOLGATE_OAUTH_RESOURCE": "https://toolgate.example.com",
		"TOOLGATE_OAUTH_LEEWAY":   "10s",
	}))
	if err != nil || !slices.Equal(c.OAuth.Issuers, []string{"https://auth.example.com", "http://127.0.0.1:9000/realms/x"}) ||
		c.OAuth.Resource != "https://toolgate.example.com" || c.OAuth.Leeway != 10*time.Second || c.OAuth.ScopeSearch != "toolgate:search" ||
		c.OAuth.RatePerMin != 600 || c.OAuth.TenantClaim != "toolgate_tenant" {
		t.Fatalf("issuers: %+v %v", c.OAuth, err)
	}
	for name, tc := range map[string]struct {
		env     map[string]string
		setting string
	}{
		"issuer without resource": {map[string]string{"TOOLGATE_OAUTH_ISSUERS": "https://a.example.com"}, "TOOLGATE_OAUTH_RESOURCE"},
		"resource without issuer": {map[string]string{"TOOLGATE_OAUTH_RESOURCE": "https://t.example.com"}, "TOOLGATE_OAUTH_RESOURCE"},
		"http issuer":             {map[string]string{"TOOLGATE_OAUTH_ISSUERS": "http://a.example.com", "TOOLGATE_OAUTH_RESOURCE": "https://t.example.com"}, "TOOLGATE_OAUTH_ISSUERS"},
		"relative issuer":         {map[string]string{"TOOLGATE_OAUTH_ISSUERS": "auth.example.com", "TOOLGATE_OAUTH_RESOURCE": "https://t.example.com"}, "TOOLGATE_OAUTH_ISSUERS"},
		"resource with fragment":  {map[string]string{"TOOLGATE_OAUTH_ISSUERS": "https://a.example.com", "TOOLGATE_OAUTH_RESOURCE": "https://t.example.com/#x"}, "TOOLGATE_OAUTH_RESOURCE"},
		"same scopes":             {map[string]string{"TOOLGATE_OAUTH_SCOPE_ADMIN": "toolgate:search"}, "TOOLGATE_OAUTH_SCOPE_ADMIN"},
	} {
		_, err := Load(env(tc.env))
		var ce *Error
		if !errors.As(err, &ce) || ce.Setting != tc.setting || strings.TrimSpace(ce.Reason) == "" {
			t.Errorf("%s: %v, want an error of %s", name, err, tc.setting)
		}
	}
}

// TestCORSOrigins: no origin by default; listed origins are kept as browsers send them; a
// path, a plain-http remote origin or open mode is refused.
func TestCORSOrigins(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil || len(c.CORSOrigins) != 0 {
		t.Fatalf("default: %v %v", c.CORSOrigins, err)
	}
	c, err = Load(env(map[string]string{"TOOLGATE_CORS_ORIGINS": "https://App.example.com:443, http://localhost:5173"}))
	if err != nil || !slices.Equal([]string(c.CORSOrigins), []string{"https://app.example.com", "http://localhost:5173"}) {
		t.Fatalf("origins: %v %v", c.CORSOrigins, err)
	}
	for name, tc := range map[string]map[string]string{
		"path":        {"TOOLGATE_CORS_ORIGINS": "https://app.example.com/chat"},
		"remote http": {"TOOLGATE_CORS_ORIGINS": "http://app.example.com"},
		"wildcard":    {"TOOLGATE_CORS_ORIGINS": "*"},
		"open mode":   {"TOOLGATE_CORS_ORIGINS": "https://app.example.com", "TOOLGATE_OPEN": "true"},
	} {
		_, err := Load(env(tc))
		var ce *Error
		if !errors.As(err, &ce) || ce.Setting != "TOOLGATE_CORS_ORIGINS" {
			t.Errorf("%s: %v, want a TOOLGATE_CORS_ORIGINS error", name, err)
		}
	}
}

// TestOAuthIntrospectionSettings: introspection needs one of the trusted issuers and both
// client credentials; credentials without an issuer are a mistake, not ignored.
func TestOAuthIntrospectionSettings(t *testing.T) {
	base := map[string]string{"TOOLGATE_OAUTH_ISSUERS": "https://a.example.com", "TOOLGATE_OAUTH_RESOURCE": "https://t.example.com"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	c, err := Load(env(with("TOOLGATE_OAUTH_INTROSPECTION_ISSUER", "https://a.example.com",
		"TOOLGATE_OAUTH_INTROSPECTION_CLIENT_ID", "toolgate", "TOOLGATE_OAUTH_INTROSPECTION_CLIENT_SECRET", "s")))
	if err != nil || !c.OAuth.Introspection.Enabled() || c.OAuth.Introspection.ClientID != "toolgate" {
		t.Fatalf("introspection: %+v %v", c.OAuth.Introspection, err)
	}
	for name, tc := range map[string]struct {
		env     map[string]string
		setting string
	}{
		"untrusted issuer":  {with("TOOLGATE_OAUTH_INTROSPECTION_ISSUER", "https://b.example.com", "TOOLGATE_OAUTH_INTROSPECTION_CLIENT_ID", "x", "TOOLGATE_OAUTH_INTROSPECTION_CLIENT_SECRET", "s"), "TOOLGATE_OAUTH_INTROSPECTION_ISSUER"},
		"no secret":         {with("TOOLGATE_OAUTH_INTROSPECTION_ISSUER", "https://a.example.com", "TOOLGATE_OAUTH_INTROSPECTION_CLIENT_ID", "x"), "TOOLGATE_OAUTH_INTROSPECTION_CLIENT_ID"},
		"client, no issuer": {with("TOOLGATE_OAUTH_INTROSPECTION_CLIENT_ID", "x", "TOOLGATE_OAUTH_INTROSPECTION_CLIENT_SECRET", "s"), "TOOLGATE_OAUTH_INTROSPECTION_ISSUER"},
	} {
		_, err := Load(env(tc.env))
		var ce *Error
		if !errors.As(err, &ce) || ce.Setting != tc.setting {
			t.Errorf("%s: %v, want an error about %s", name, err, tc.setting)
		}
	}
}
