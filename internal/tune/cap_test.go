package tune_test

import (
	"errors"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
	"github.com/toolgate/toolgate/internal/tune"
)

// TestTuneCapsLabelsPerKey: a search key that floods labels contributes at most max_per_key
// of the labelled searches a tune trains and evaluates on (its most recent), whatever its
// volume; other keys' searches are all used, and so are those of trusted callers (no key,
// an admin key), which are not capped. The default cap is a tenth of max_searches.
func TestTuneCapsLabelsPerKey(t *testing.T) {
	t.Parallel()
	tools, uses := testfactory.MisleadingCatalog()
	s := newSetup(t, "ws", tools, 0)
	keys := auth.NewKeys(s.pool, time.Now)
	key := func(name string, scope auth.Scope) (int64, auth.Caller) {
		k, _, err := keys.Create(s.ctx, auth.Spec{Name: name, Scope: scope})
		if err != nil {
			t.Fatal(err)
		}
		return k.ID, *k.Caller()
	}
	floodID, flood := key("flood", auth.ScopeSearch)
	fairID, fair := key("fair", auth.ScopeSearch)
	_, admin := key("ops", auth.ScopeAdmin)

	flooded := testfactory.LabelsAs(s.ctx, t, s.svc, flood, "ws", uses[:90])
	flooded += testfactory.LabelsAs(s.ctx, t, s.svc, flood, "ws", uses[:90])
	fairN := testfactory.LabelsAs(s.ctx, t, s.svc, fair, "ws", uses[90:105])
	trusted := testfactory.LabelsAs(s.ctx, t, s.svc, admin, "ws", uses[105:125])
	trusted += testfactory.LabelsAs(s.ctx, t, s.svc, search.Internal(), "ws", uses[125:])
	// a search by OAuth access token has no key to cap it: it is left out
	token := auth.Caller{Name: auth.OAuthName("https://auth.example.com", "mallory"), Scope: auth.ScopeSearch}
	if n := testfactory.LabelsAs(s.ctx, t, s.svc, token, "ws", uses[:60]); n < 30 {
		t.Fatalf("labelled %d token searches: the fixture does not exercise them", n)
	}
	if flooded < 150 || fairN < 10 || trusted < 30 {
		t.Fatalf("labelled %d flood, %d fair, %d trusted searches: the fixture does not exercise the cap", flooded, fairN, trusted)
	}

	const cap = 20
	perKey, gotTrusted, err := tune.SelectedPerKey(s.ctx, s.pool, tune.Options{MaxPerKey: cap})
	if err != nil {
		t.Fatal(err)
	}
	if perKey[floodID] != cap || perKey[fairID] != fairN || gotTrusted != trusted || len(perKey) != 2 {
		t.Fatalf("selected per key %v and %d trusted; want flood (%d) capped at %d, fair (%d) all %d, trusted all %d",
			perKey, gotTrusted, floodID, cap, fairID, fairN, trusted)
	}
	// Without a cap of its own, a tune caps at a tenth of max_searches.
	perKey, _, err = tune.SelectedPerKey(s.ctx, s.pool, tune.Options{MaxSearches: 100})
	if err != nil || perKey[floodID] != 10 {
		t.Fatalf("default cap with max_searches 100: %v %v, want 10 of the flood key's", perKey, err)
	}
	if o, err := tune.WithDefaults(tune.Options{}); err != nil || o.MaxPerKey != tune.DefaultMaxSearches/10 {
		t.Fatalf("default max_per_key %d (%v), want %d", o.MaxPerKey, err, tune.DefaultMaxSearches/10)
	}
	var inv *tune.InvalidOptionsError
	for _, o := range []tune.Options{{MaxPerKey: -1}, {MaxSearches: 100, MaxPerKey: 101}} {
		if _, err := tune.WithDefaults(o); !errors.As(err, &inv) {
			t.Errorf("%+v: %v, want InvalidOptionsError", o, err)
		}
	}
}
