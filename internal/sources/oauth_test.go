package sources_test

import (
	"context"
	"errors"
	"testing"

	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/sources"
)

// TestOAuthSourceSettings: an OAuth source is refused when toolgate cannot hold tokens
// (OAuthReady), and one whose URL or oauth settings change forgets its tokens, which were
// issued for the old server; another change (the interval) keeps them.
func TestOAuthSourceSettings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, queue := setup(t)
	noKeys := errors.New("no keys")
	svc := &sources.Service{Pool: pool, Queue: queue, OAuthReady: func() error { return noKeys }}
	in := sources.NewSource{Name: "tracker", Kind: mcpclient.KindHTTP,
		MCP: sources.MCPSettings{URL: "https://tracker.example.com/mcp", OAuth: &mcpclient.OAuthConfig{}}}
	if _, err := svc.Create(ctx, in); !errors.Is(err, noKeys) {
		t.Fatalf("create without keys: %v", err)
	}
	if _, err := (&sources.Service{Pool: pool, Queue: queue}).Create(ctx, in); !errors.Is(err, mcpclient.ErrNoAuthorizer) {
		t.Fatalf("create without an authorizer: %v", err)
	}
	svc.OAuthReady = func() error { return nil }
	created, err := svc.Create(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	authorize := func() {
		t.Helper()
		if _, err := pool.Exec(ctx, `INSERT INTO source_oauth (source_id, state, key_id, secret) VALUES ($1, 'authorized', 'k', '\x00')
			ON CONFLICT (source_id) DO UPDATE SET state = 'authorized', key_id = 'k', secret = '\x00'`, created.Source.ID); err != nil {
			t.Fatal(err)
		}
	}
	state := func() (string, bool) {
		t.Helper()
		var s string
		var sealed bool
		if err := pool.QueryRow(ctx, `SELECT state, secret IS NOT NULL FROM source_oauth WHERE source_id = $1`, created.Source.ID).Scan(&s, &sealed); err != nil {
			t.Fatal(err)
		}
		return s, sealed
	}
	authorize()
	interval := "10m"
	if _, err := svc.Update(ctx, "tracker", sources.Change{Interval: &interval}); err != nil {
		t.Fatal(err)
	}
	if s, sealed := state(); s != "authorized" || !sealed {
		t.Errorf("after an interval change: %s, tokens %t; want them kept", s, sealed)
	}
	for name, ch := range map[string]sources.Change{
		"url":   {URL: ptr("https://elsewhere.example.com/mcp")},
		"oauth": {OAuth: &mcpclient.OAuthConfig{ClientID: "other"}},
	} {
		authorize()
		if _, err := svc.Update(ctx, "tracker", ch); err != nil {
			t.Fatal(err)
		}
		if s, sealed := state(); s != "unauthorized" || sealed {
			t.Errorf("after a change of %s: %s, tokens %t; want unauthorized without tokens", name, s, sealed)
		}
	}
}

func ptr[T any](v T) *T { return &v }
