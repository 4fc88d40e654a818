package observed_test

import (
	"context"
	"slices"
	"testing"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/observed"
	"github.com/toolgate/toolgate/internal/search"
)

// key makes an API key of scope and returns its caller.
func (e *env) key(t *testing.T, name string, scope auth.Scope) auth.Caller {
	t.Helper()
	k, _, err := e.keys.Create(context.Background(), auth.Spec{Name: name, Scope: scope})
	if err != nil {
		t.Fatal(err)
	}
	return *k.Caller()
}

// age makes every label an hour old, as if written long before the last sweep: a sweep
// then refreshes a tool only for another reason than its labels.
func (e *env) age(t *testing.T) {
	t.Helper()
	if _, err := e.pool.Exec(context.Background(), `UPDATE search_labels SET created_at = created_at - interval '1 hour'`); err != nil {
		t.Fatal(err)
	}
}

func (e *env) revoke(t *testing.T, name string) {
	t.Helper()
	if _, err := e.keys.Revoke(context.Background(), name); err != nil {
		t.Fatal(err)
	}
}

// TestDistinctKeysThreshold: a query searched by fewer distinct search keys than the
// threshold is neither a component nor findable, however often one key searched it; the
// key that brings it to the threshold makes it observed, lexically and by vector; revoking
// one of those keys takes it back out at the next sweep, without any new label.
func TestDistinctKeysThreshold(t *testing.T) {
	t.Parallel()
	cfg, err := config.Load(func(string) string { return "" })
	if err != nil || cfg.ObservedMinKeys != 3 || observed.DefaultMinKeys != 3 {
		t.Fatalf("TOOLGATE_OBSERVED_MIN_KEYS defaults to %d (%v), want 3", cfg.ObservedMinKeys, err)
	}
	for _, bad := range []string{"0", "-1", "1001", "three"} {
		if _, err := config.Load(func(k string) string {
			if k == "TOOLGATE_OBSERVED_MIN_KEYS" {
				return bad
			}
			return ""
		}); err == nil {
			t.Errorf("TOOLGATE_OBSERVED_MIN_KEYS=%s accepted", bad)
		}
	}
	e := setup(t, 5) // MinKeys 0: the default
	a, b, c := e.key(t, "a", auth.ScopeSearch), e.key(t, "b", auth.ScopeSearch), e.key(t, "c", auth.ScopeSearch)
	const q = "stock price on the bourse"
	for range 5 {
		e.labelled(t, a, q, stock, true)
	}
	e.labelled(t, b, q, stock, true)
	sweep(t, e.obs)
	if got := e.observedOf(t, stock); len(got) != 0 {
		t.Fatalf("observed queries with 2 keys: %q, want none", got)
	}
	if r := e.rank(t, "bourse", search.ModeLexical, stock); r != 0 {
		t.Fatalf("bourse finds %s lexically (rank %d) with 2 keys", stock, r)
	}

	e.labelled(t, c, "Stock price on the  bourse", stock, true) // the same query, spelt otherwise
	sweep(t, e.obs)
	if got := e.observedOf(t, stock); !slices.Equal(got, []string{"Stock price on the bourse"}) {
		t.Fatalf("observed queries with 3 keys: %q", got)
	}
	if r := e.rank(t, "bourse", search.ModeLexical, stock); r != 1 {
		t.Fatalf("lexical rank of %s for bourse with 3 keys: %d, want 1", stock, r)
	}
	if r := e.rank(t, "bourse", search.ModeVector, stock); r != 1 {
		t.Fatalf("vector rank of %s for bourse with 3 keys: %d, want 1", stock, r)
	}

	e.age(t)
	if st := sweep(t, e.obs); st.Tools != 0 {
		t.Fatalf("a sweep without new labels refreshed %+v", st)
	}
	e.revoke(t, "c")
	if st := sweep(t, e.obs); st.Changed != 1 {
		t.Fatalf("the sweep after a revocation %+v, want the tool changed", st)
	}
	if got := e.observedOf(t, stock); len(got) != 0 {
		t.Fatalf("observed queries once a key was revoked: %q, want none", got)
	}
	if r := e.rank(t, "bourse", search.ModeLexical, stock); r != 0 {
		t.Fatalf("bourse still finds %s lexically (rank %d) once a key was revoked", stock, r)
	}
}

// TestKeyVolumeCountsOnce: the queries kept are those the most distinct keys asked, not
// those searched most often: one key's hundred searches weigh as one.
func TestKeyVolumeCountsOnce(t *testing.T) {
	t.Parallel()
	e := setup(t, 1)
	a, b, c, d := e.key(t, "a", auth.ScopeSearch), e.key(t, "b", auth.ScopeSearch), e.key(t, "c", auth.ScopeSearch), e.key(t, "d", auth.ScopeSearch)
	for _, k := range []auth.Caller{a, b, c, d} {
		e.labelled(t, k, "share price of a stock", stock, true)
	}
	for range 8 {
		e.labelled(t, a, "stock price on the bourse", stock, true)
	}
	e.labelled(t, b, "stock price on the bourse", stock, true)
	e.labelled(t, c, "stock price on the bourse", stock, true)
	sweep(t, e.obs)
	if got := e.observedOf(t, stock); !slices.Equal(got, []string{"share price of a stock"}) {
		t.Fatalf("observed queries: %q, want the one 4 keys asked over the one 3 keys asked 10 times", got)
	}
}

// TestTrustedCallers: a search without a key (the operator's: open mode, a local stdio
// gateway, the internal caller) and one made with an admin key are trusted on their own;
// a search key's alone is not. A revoked admin key's searches stop counting.
func TestTrustedCallers(t *testing.T) {
	t.Parallel()
	e := setup(t, 5)
	admin, agent := e.key(t, "ops", auth.ScopeAdmin), e.key(t, "agent", auth.ScopeSearch)
	e.labelled(t, search.Internal(), "stock price on the bourse", stock, true)
	e.labelled(t, admin, "mail a colleague by email", email, true)
	e.labelled(t, agent, "weather forecast for the picnic", weather, true)
	sweep(t, e.obs)
	if got := e.observedOf(t, stock); !slices.Equal(got, []string{"stock price on the bourse"}) {
		t.Fatalf("observed queries of a keyless search: %q", got)
	}
	if got := e.observedOf(t, email); !slices.Equal(got, []string{"mail a colleague by email"}) {
		t.Fatalf("observed queries of an admin key's search: %q", got)
	}
	if got := e.observedOf(t, weather); len(got) != 0 {
		t.Fatalf("observed queries of one search key: %q, want none", got)
	}
	e.age(t)
	e.revoke(t, "ops")
	sweep(t, e.obs)
	if got := e.observedOf(t, email); len(got) != 0 {
		t.Fatalf("observed queries of a revoked admin key: %q, want none", got)
	}
}

// TestMinKeysChangeRefreshes: a sweep under another threshold than the last one refreshes
// every tool that has observed queries, labelled since or not, so that raising the
// threshold (or upgrading to a version that has one) takes out what no longer meets it.
func TestMinKeysChangeRefreshes(t *testing.T) {
	t.Parallel()
	e := setup(t, 5)
	e.obs.MinKeys = 1
	agent := e.key(t, "agent", auth.ScopeSearch)
	e.labelled(t, agent, "stock price on the bourse", stock, true)
	sweep(t, e.obs)
	if got := e.observedOf(t, stock); !slices.Equal(got, []string{"stock price on the bourse"}) {
		t.Fatalf("observed queries with a threshold of 1: %q", got)
	}
	e.age(t)
	if st := sweep(t, e.obs); st.Tools != 0 {
		t.Fatalf("a sweep without labels or changes refreshed %+v", st)
	}
	e.obs.MinKeys = 3
	if st := sweep(t, e.obs); st.Tools != 1 || st.Changed != 1 {
		t.Fatalf("the sweep under a new threshold %+v, want the tool refreshed", st)
	}
	if got := e.observedOf(t, stock); len(got) != 0 {
		t.Fatalf("observed queries once the threshold is 3: %q, want none", got)
	}
	if r := e.rank(t, "bourse", search.ModeLexical, stock); r != 0 {
		t.Fatalf("bourse still finds %s lexically (rank %d)", stock, r)
	}
}

// TestOAuthCallersDoNotCount: searches made with OAuth access tokens (no key to count
// toward the threshold nor to revoke) are left out, however many subjects made them: they
// are not keyless, trusted searches.
func TestOAuthCallersDoNotCount(t *testing.T) {
	t.Parallel()
	e := setup(t, 1)
	for _, sub := range []string{"mallory", "eve", "trudy"} {
		e.labelled(t, auth.Caller{Name: auth.OAuthName("https://auth.example.com", sub), Scope: auth.ScopeSearch}, "weather forecast for the picnic", weather, true)
	}
	sweep(t, e.obs)
	if got := e.observedOf(t, weather); len(got) != 0 {
		t.Fatalf("observed queries of OAuth callers: %q, want none", got)
	}
}
