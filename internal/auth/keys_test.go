package auth_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/plan"
)

var keyFormat = regexp.MustCompile(`^tg_[a-z2-7]{10}_[a-z2-7]{52}$`)

func TestCreateStoresOnlyTheHash(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	keys := auth.NewKeys(pool, time.Now)
	ctx := context.Background()
	k1, text1, err := keys.Create(ctx, auth.Spec{Name: "a", Scope: auth.ScopeSearch})
	if err != nil {
		t.Fatal(err)
	}
	_, text2, err := keys.Create(ctx, auth.Spec{Name: "b", Scope: auth.ScopeSearch})
	if err != nil {
		t.Fatal(err)
	}
	if !keyFormat.MatchString(text1) || !keyFormat.MatchString(text2) || text1[:13] == text2[:13] {
		t.Fatalf("keys %q, %q: want tg_<10>_<52> with distinct prefixes", text1, text2)
	}
	row, err := db.New(pool).GetAPIKeyByPrefix(ctx, k1.Prefix)
	if err != nil {
		t.Fatal(err)
	}
	secret := text1[14:]
	want := sha256.Sum256([]byte(secret))
	if string(row.SecretHash) != string(want[:]) {
		t.Errorf("secret_hash is not SHA-256 of the secret")
	}
	if strings.Contains(string(row.SecretHash), secret) {
		t.Errorf("the secret is stored")
	}
	got, err := keys.Verify(ctx, text1)
	if err != nil || got.Name != "a" || got.Sources != nil || got.RatePerMin != 0 || got.Plan != "" {
		t.Errorf("Verify = %+v, %v", got, err)
	}
	// A default query plan is stored and rides on the caller.
	_, text3, err := keys.Create(ctx, auth.Spec{Name: "planned", Scope: auth.ScopeSearch, Plan: plan.ModeFull})
	if err != nil {
		t.Fatal(err)
	}
	got, err = keys.Verify(ctx, text3)
	if err != nil || got.Plan != plan.ModeFull || got.Caller().Plan != plan.ModeFull {
		t.Errorf("planned key: %+v, %v", got, err)
	}
}

func TestCreateRejectsBadSpecs(t *testing.T) {
	t.Parallel()
	keys := auth.NewKeys(pgtest.NewPool(t), time.Now)
	ctx := context.Background()
	for _, s := range []auth.Spec{
		{Name: "", Scope: auth.ScopeAdmin},
		{Name: "has space", Scope: auth.ScopeAdmin},
		{Name: "x", Scope: "root"},
		{Name: "x", Scope: auth.ScopeAdmin, RatePerMin: -5},
		{Name: "x", Scope: auth.ScopeAdmin, RatePerMin: 4294967301}, // would wrap to 5 in int32
		{Name: "x", Scope: auth.ScopeSearch, Sources: []string{}},
		{Name: "x", Scope: auth.ScopeSearch, Sources: []string{"fin", " "}},
		{Name: "x", Scope: auth.ScopeSearch, Plan: "everything"},
	} {
		var se *auth.InvalidSpecError
		if _, _, err := keys.Create(ctx, s); !errors.As(err, &se) {
			t.Errorf("%+v: got %v, want *InvalidSpecError", s, err)
		}
	}
	if _, _, err := keys.Create(ctx, auth.Spec{Name: "dup", Scope: auth.ScopeAdmin}); err != nil {
		t.Fatal(err)
	}
	var taken *auth.NameTakenError
	if _, _, err := keys.Create(ctx, auth.Spec{Name: "dup", Scope: auth.ScopeSearch}); !errors.As(err, &taken) || taken.Name != "dup" {
		t.Errorf("duplicate active name: got %v, want *NameTakenError", err)
	}
}

// An admin key may mint keys and change every source: limiting it to sources would be a
// promise it cannot keep, so the combination is refused, by Create and by the schema.
func TestAdminKeyCannotBeLimitedToSources(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	keys := auth.NewKeys(pool, time.Now)
	ctx := context.Background()
	var se *auth.InvalidSpecError
	if _, _, err := keys.Create(ctx, auth.Spec{Name: "fin-admin", Scope: auth.ScopeAdmin, Sources: []string{"fin"}}); !errors.As(err, &se) || se.Field != "sources" {
		t.Fatalf("admin key with sources: got %v, want *InvalidSpecError on sources", err)
	}
	// Written past Create, the row is refused by the table's CHECK.
	_, err := db.New(pool).CreateAPIKey(ctx, db.CreateAPIKeyParams{Name: "raw", Prefix: "rawrawrawr",
		SecretHash: []byte{1}, Scope: "admin", Sources: []string{"fin"}})
	if err == nil || !strings.Contains(err.Error(), "api_keys_admin_every_source") {
		t.Errorf("admin row with sources: got %v, want the CHECK violation", err)
	}
}

// A key's source list names existing sources only, without repeats, and at most
// 100 (the documented limit, auth.MaxKeySources) of them.
func TestKeySourcesMustExist(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	keys := auth.NewKeys(pool, time.Now)
	ctx := context.Background()
	for _, name := range []string{"fin", "news"} {
		if _, err := db.New(pool).EnsureCatalogSource(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	repeated := []string{"fin"}
	for range 1000 {
		repeated = append(repeated, "news", "fin")
	}
	_, text, err := keys.Create(ctx, auth.Spec{Name: "agent", Scope: auth.ScopeSearch, Sources: repeated})
	if err != nil {
		t.Fatal(err)
	}
	if k, err := keys.Verify(ctx, text); err != nil || strings.Join(k.Sources, ",") != "fin,news" {
		t.Errorf("stored sources = %v, %v; want [fin news]", k.Sources, err)
	}

	many := make([]string, 101)
	for i := range many {
		many[i] = fmt.Sprintf("s%d", i)
	}
	nope := make([]string, 1000)
	for i := range nope {
		nope[i] = "nope"
	}
	for _, tc := range []struct {
		sources []string
		reason  string
	}{
		{[]string{"fin", "nope"}, `no source is named "nope"`},
		{nope, `no source is named "nope";`},
		{[]string{"a", "b", "c", "d", "e", "f", "g", "fin"}, `"e" and 2 more`},
		{many, "101 sources, at most 100"},
	} {
		var se *auth.InvalidSpecError
		_, _, err := keys.Create(ctx, auth.Spec{Name: "bad", Scope: auth.ScopeSearch, Sources: tc.sources})
		if !errors.As(err, &se) || se.Field != "sources" || !strings.Contains(se.Reason, tc.reason) {
			t.Errorf("%d sources %q...: got %v, want *InvalidSpecError with %q", len(tc.sources), tc.sources[:2], err, tc.reason)
		}
	}
}

func TestVerifyRejectsMalformedKeys(t *testing.T) {
	t.Parallel()
	keys := auth.NewKeys(pgtest.NewPool(t), time.Now)
	for _, text := range []string{"", "tg_", "tg_short", "xx_abcdefghij_secret", "tg_abcdefghij-secret", "tg_abcdefghij_"} {
		if _, err := keys.Verify(context.Background(), text); !errors.Is(err, auth.ErrInvalidKey) {
			t.Errorf("%q: got %v, want ErrInvalidKey", text, err)
		}
	}
}

func TestUseCountsPerWindow(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	now := time.Date(2026, 1, 1, 9, 30, 59, 500_000_000, time.UTC)
	keys := auth.NewKeys(pool, func() time.Time { return now })
	ctx := context.Background()
	_, text, err := keys.Create(ctx, auth.Spec{Name: "a", Scope: auth.ScopeSearch, RatePerMin: 3})
	if err != nil {
		t.Fatal(err)
	}
	k, err := keys.Verify(ctx, text)
	if err != nil {
		t.Fatal(err)
	}
	for want := 2; want >= 0; want-- {
		if left, err := keys.Use(ctx, k); err != nil || left != want {
			t.Fatalf("Use: %d, %v; want %d left", left, err, want)
		}
	}
	_, err = keys.Use(ctx, k)
	var rl *auth.RateLimitError
	if !errors.As(err, &rl) || rl.Limit != 3 || rl.RetryAfter != 500*time.Millisecond || auth.RetryAfterSeconds(rl.RetryAfter) != 1 {
		t.Fatalf("4th Use: %v (%+v); want a RateLimitError retrying after 0.5s (1 s rounded up)", err, rl)
	}
	now = now.Add(500 * time.Millisecond)
	if left, err := keys.Use(ctx, k); err != nil || left != 2 {
		t.Errorf("next window: %d, %v; want 2 left", left, err)
	}

	_, unlimited, _ := keys.Create(ctx, auth.Spec{Name: "u", Scope: auth.ScopeSearch})
	u, _ := keys.Verify(ctx, unlimited)
	for range 10 {
		if left, err := keys.Use(ctx, u); err != nil || left != -1 {
			t.Fatalf("unlimited key: %d, %v", left, err)
		}
	}
}

func TestRevoke(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	now := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	keys := auth.NewKeys(pool, func() time.Time { return now })
	ctx := context.Background()
	k, text, err := keys.Create(ctx, auth.Spec{Name: "a", Scope: auth.ScopeAdmin})
	if err != nil {
		t.Fatal(err)
	}
	got, err := keys.Revoke(ctx, "a")
	if err != nil || len(got) != 1 || got[0].Prefix != k.Prefix || !got[0].RevokedAt.Equal(now) {
		t.Fatalf("Revoke by name = %+v, %v", got, err)
	}
	if _, err := keys.Verify(ctx, text); !errors.Is(err, auth.ErrRevokedKey) {
		t.Errorf("Verify after revoke = %v, want ErrRevokedKey", err)
	}
	if _, err := keys.Revoke(ctx, "a"); !errors.Is(err, auth.ErrKeyNotFound) {
		t.Errorf("revoke by name of a revoked key = %v, want ErrKeyNotFound (no active key has that name)", err)
	}
	now = now.Add(time.Hour)
	again, err := keys.RevokePrefix(ctx, k.Prefix)
	if err != nil || !again.RevokedAt.Equal(now.Add(-time.Hour)) {
		t.Errorf("second revocation by prefix = %+v, %v; want the first revoked_at kept", again, err)
	}
	if _, err := keys.RevokePrefix(ctx, "nope"); !errors.Is(err, auth.ErrKeyNotFound) {
		t.Errorf("unknown prefix = %v, want ErrKeyNotFound", err)
	}
}

func TestScopeAllows(t *testing.T) {
	if !auth.ScopeAdmin.Allows(auth.ScopeSearch) || !auth.ScopeAdmin.Allows(auth.ScopeAdmin) ||
		!auth.ScopeSearch.Allows(auth.ScopeSearch) || auth.ScopeSearch.Allows(auth.ScopeAdmin) {
		t.Error("admin must allow everything, search only search")
	}
}

// TestUseIsExactUnderConcurrency: concurrent requests of one key (as from several API
// instances) are each counted once, so exactly the limit gets through.
func TestUseIsExactUnderConcurrency(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	keys := auth.NewKeys(pool, func() time.Time { return time.Date(2026, 1, 1, 9, 0, 1, 0, time.UTC) })
	ctx := context.Background()
	_, text, err := keys.Create(ctx, auth.Spec{Name: "a", Scope: auth.ScopeSearch, RatePerMin: 10})
	if err != nil {
		t.Fatal(err)
	}
	k, err := keys.Verify(ctx, text)
	if err != nil {
		t.Fatal(err)
	}
	var ok, limited atomic.Int32
	var wg sync.WaitGroup
	for range 25 {
		wg.Go(func() {
			_, err := keys.Use(ctx, k)
			var rl *auth.RateLimitError
			switch {
			case err == nil:
				ok.Add(1)
			case errors.As(err, &rl):
				limited.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 10 || limited.Load() != 15 {
		t.Errorf("%d allowed, %d limited; want 10 and 15", ok.Load(), limited.Load())
	}
}

// TestRevokeEndsTheKeysMCPSessions: revoking a key, by name or by prefix, deletes its MCP
// sessions (owned by key id) and only its own.
func TestRevokeEndsTheKeysMCPSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	keys := auth.NewKeys(pool, time.Now)
	a, _, err := keys.Create(ctx, auth.Spec{Name: "a", Scope: auth.ScopeSearch})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := keys.Create(ctx, auth.Spec{Name: "b", Scope: auth.ScopeSearch})
	if err != nil {
		t.Fatal(err)
	}
	for id, key := range map[string]any{"sa": a.ID, "sb": b.ID, "open": nil} {
		if _, err := pool.Exec(ctx, `INSERT INTO mcp_sessions (id, caller, caller_key_id, state) VALUES ($1, 'x', $2, '{}')`, id, key); err != nil {
			t.Fatal(err)
		}
	}
	left := func() []string {
		rows, _ := pool.Query(ctx, `SELECT id FROM mcp_sessions ORDER BY id`)
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	if _, err := keys.Revoke(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if got := left(); !slices.Equal(got, []string{"open", "sb"}) {
		t.Fatalf("after revoking a by name: %v", got)
	}
	if _, err := keys.RevokePrefix(ctx, b.Prefix); err != nil {
		t.Fatal(err)
	}
	if got := left(); !slices.Equal(got, []string{"open"}) {
		t.Fatalf("after revoking b by prefix: %v", got)
	}
}
