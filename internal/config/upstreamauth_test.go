package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/upstreamauth"
)

// TestUpstreamAuthSettings: no secret key by default (OAuth sources refused); keys are read
// and a bad one is refused without being quoted; the public URL defaults to the OAuth
// resource identifier and must be https (http on loopback).
func TestUpstreamAuthSettings(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil || c.UpstreamAuth.Keys != nil || c.UpstreamAuth.PublicURL != "" {
		t.Fatalf("default: %+v %v", c.UpstreamAuth, err)
	}
	k1, k2 := upstreamauth.NewKey(), upstreamauth.NewKey()
	c, err = Load(env(map[string]string{"TOOLGATE_SECRET_KEYS": k1 + ", " + k2,
		"TOOLGATE_OAUTH_ISSUERS": "https://auth.example.com", "TOOLGATE_OAUTH_RESOURCE": "https://toolgate.example.com"}))
	if err != nil || c.UpstreamAuth.Keys == nil || c.UpstreamAuth.PublicURL != "https://toolgate.example.com" {
		t.Fatalf("keys and default public URL: %+v %v", c.UpstreamAuth, err)
	}
	if strings.Contains(c.UpstreamAuth.Keys.String(), k1) {
		t.Error("the keyring prints its key")
	}
	for name, tc := range map[string]struct{ env map[string]string }{
		"short key":       {map[string]string{"TOOLGATE_SECRET_KEYS": "c2VjcmV0"}},
		"bad second key":  {map[string]string{"TOOLGATE_SECRET_KEYS": k1 + ",c2VjcmV0"}},
		"http public URL": {map[string]string{"TOOLGATE_PUBLIC_URL": "http://toolgate.example.com"}},
	} {
		_, err := Load(env(tc.env))
		var ce *Error
		if !errors.As(err, &ce) || strings.Contains(err.Error(), "c2VjcmV0") || strings.Contains(err.Error(), k1) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
