package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/derrors"
	"github.com/toolgate/toolgate/internal/plan"
)

// A key is written tg_<prefix>_<secret>. The prefix is stored in clear and finds the row;
// only the SHA-256 of the secret is stored, and it is compared in constant time.
const (
	keyTag          = "tg_"
	prefixLen       = 10 // base32 characters: 50 random bits, enough to find a row
	secretBytes     = 32 // 256 random bits
	rateWindow      = time.Minute
	uniqueViolation = "23505"
)

// lowercase base32 without padding: no '_' so the three parts split unambiguously.
var b32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ValidTenant reports whether s may name a tenant: 1-64 characters of A-Z a-z 0-9 . _ -,
// starting with a letter or digit — never a key's own tenant "key:<id>".
func ValidTenant(s string) bool { return validName.MatchString(s) }

// ErrInvalidKey is a missing, malformed or unknown key, or a wrong secret.
var ErrInvalidKey error = &derrors.Sentinel{Category: derrors.Unauthorized, Message: "missing or invalid API key",
	Public: "missing or invalid API key (send an Authorization: Bearer header)"}

// ErrRevokedKey is a key whose secret is right but which was revoked.
var ErrRevokedKey error = &derrors.Sentinel{Category: derrors.Unauthorized, Message: "API key revoked", APICode: "key_revoked"}

// ErrKeyNotFound is a revocation of a key that does not exist.
var ErrKeyNotFound error = &derrors.Sentinel{Category: derrors.NotFound,
	Message: "no such API key (no key has that prefix and no active key has that name)", Public: "API key not found"}

// ScopeError is a valid key used for something its scope does not allow.
type ScopeError struct {
	Have, Need Scope
}

func (e *ScopeError) Error() string {
	return fmt.Sprintf("this key has scope %q; %q is needed", e.Have, e.Need)
}

func (e *ScopeError) Is(target error) bool { return target == derrors.Forbidden }

// RateLimitError is a request over its key's per-minute limit.
type RateLimitError struct {
	Limit int
	// RetryAfter is the time until the next window opens.
	RetryAfter time.Duration
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("rate limit of %d requests per minute exceeded; retry in %ds", e.Limit, RetryAfterSeconds(e.RetryAfter))
}

func (e *RateLimitError) Is(target error) bool { return target == derrors.RateLimited }

// Details are the limit and the seconds until the next window, for the API's error body.
func (e *RateLimitError) Details() any {
	return map[string]int{"limit_per_min": e.Limit, "retry_after_s": RetryAfterSeconds(e.RetryAfter)}
}

// RetryAfterSeconds rounds d up to whole seconds, at least 1, as Retry-After wants.
func RetryAfterSeconds(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	return max(s, 1)
}

// InvalidSpecError is a key request that cannot be honoured.
type InvalidSpecError struct {
	Field, Reason string
}

func (e *InvalidSpecError) Error() string        { return e.Field + ": " + e.Reason }
func (e *InvalidSpecError) Is(target error) bool { return target == derrors.Invalid }

// NameTakenError is a new key named like an active key.
type NameTakenError struct{ Name string }

func (e *NameTakenError) Error() string {
	return fmt.Sprintf("an active key is already named %q (revoke it first or pick another name)", e.Name)
}

func (e *NameTakenError) Is(target error) bool { return target == derrors.Conflict }

// DefaultRatePerMin is the limit of a key created without one.
const DefaultRatePerMin = 600

// Spec is what a new key may do.
type Spec struct {
	Name  string
	Scope Scope
	// Sources limits the sources a search key may see; nil means every source. An admin
	// key always sees every source.
	Sources []string
	// RatePerMin is the most requests per minute; 0 means unlimited.
	RatePerMin int
	// Plan is the query plan of the key's searches that ask for none ("" or none: no plan).
	Plan plan.Mode
	// Tenant groups search keys whose searches teach one another (docs/learning.md); ""
	// makes the key a tenant of its own. An admin key has none: its searches are the
	// operator's and teach every tenant.
	Tenant string
}

// Key is a stored key, without its secret.
type Key struct {
	ID         int64     `json:"-"`
	Name       string    `json:"name"`
	Prefix     string    `json:"prefix"`
	Scope      Scope     `json:"scope"`
	Sources    []string  `json:"sources"`
	RatePerMin int       `json:"rate_per_min,omitempty"`
	Plan       plan.Mode `json:"plan,omitempty"`
	// Tenant is the key's tenant; null for a key that is a tenant of its own (and for an
	// admin key, whose searches are the operator's).
	Tenant     *string    `json:"tenant"`
	CreatedAt  time.Time  `json:"created_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
}

// Keys creates, verifies, lists and revokes API keys, and counts their use.
type Keys struct {
	pool *pgxpool.Pool
	now  func() time.Time
}

// NewKeys returns the key store of pool; now is the clock (time.Now outside tests).
func NewKeys(pool *pgxpool.Pool, now func() time.Time) *Keys {
	return &Keys{pool: pool, now: now}
}

// Create stores a new key and returns it with the full key text, which is shown once and
// cannot be recovered afterwards.
func (k *Keys) Create(ctx context.Context, s Spec) (Key, string, error) {
	if !validName.MatchString(s.Name) {
		return Key{}, "", &InvalidSpecError{"name", fmt.Sprintf("%q: want 1-64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit", s.Name)}
	}
	if s.Scope != ScopeSearch && s.Scope != ScopeAdmin {
		return Key{}, "", &InvalidSpecError{"scope", fmt.Sprintf("%q: want search or admin", s.Scope)}
	}
	if s.RatePerMin < 0 || s.RatePerMin > math.MaxInt32 {
		return Key{}, "", &InvalidSpecError{"rate_per_min", fmt.Sprintf("must be 0 (unlimited) or from 1 to %d", math.MaxInt32)}
	}
	if s.Scope == ScopeAdmin && s.Sources != nil {
		// An admin key may mint keys and change every source, so a source list would
		// promise a limit it cannot hold.
		return Key{}, "", &InvalidSpecError{"sources", "an admin key sees every source and cannot be limited to some; give a search key the sources"}
	}
	if s.Tenant != "" && !ValidTenant(s.Tenant) {
		return Key{}, "", &InvalidSpecError{"tenant", fmt.Sprintf("%q: want 1-64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit", s.Tenant)}
	}
	if s.Scope == ScopeAdmin && s.Tenant != "" {
		return Key{}, "", &InvalidSpecError{"tenant", "an admin key's searches are the operator's and teach every tenant; give a search key the tenant"}
	}
	var tenant *string
	if s.Tenant != "" {
		tenant = &s.Tenant
	}
	sources, err := k.checkSources(ctx, s.Sources)
	if err != nil {
		return Key{}, "", err
	}
	mode, err := plan.ParseMode(string(s.Plan))
	if err != nil {
		return Key{}, "", &InvalidSpecError{"plan", fmt.Sprintf("%q: want none, rewrite, decompose or full", s.Plan)}
	}
	var keyPlan *string
	if mode != plan.ModeNone {
		keyPlan = (*string)(&mode)
	}
	rate := pgtype.Int4{Int32: int32(s.RatePerMin), Valid: s.RatePerMin > 0}
	secret := make([]byte, secretBytes)
	pfx := make([]byte, 7)
	rand.Read(secret)
	rand.Read(pfx)
	prefix := b32.EncodeToString(pfx)[:prefixLen]
	secretText := b32.EncodeToString(secret)
	hash := sha256.Sum256([]byte(secretText))
	row, err := db.New(k.pool).CreateAPIKey(ctx, db.CreateAPIKeyParams{
		Name: s.Name, Prefix: prefix, SecretHash: hash[:], Scope: string(s.Scope), Sources: sources, RatePerMin: rate,
		Plan: keyPlan, Tenant: tenant,
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == uniqueViolation && pgErr.ConstraintName == "api_keys_active_name" {
		return Key{}, "", &NameTakenError{Name: s.Name}
	}
	if err != nil {
		return Key{}, "", fmt.Errorf("create API key: %w", err)
	}
	return toKey(row), keyTag + prefix + "_" + secretText, nil
}

// MaxKeySources bounds the source list of one key: the list is checked and stored whole,
// and a longer one is a mistake (a key that should see everything has none).
const MaxKeySources = 100

// checkSources returns a new key's source list without repeats, in the given order. Every
// name must be a source that exists now: a misspelt name would give a key that silently
// sees nothing of what was meant. Keys hold names, so a source deleted later and created
// again under the same name is seen by the keys naming it.
func (k *Keys) checkSources(ctx context.Context, names []string) ([]string, error) {
	if names == nil {
		return nil, nil
	}
	bad := func(format string, args ...any) error {
		return &InvalidSpecError{"sources", fmt.Sprintf(format, args...)}
	}
	if len(names) == 0 {
		return nil, bad("an empty list would see nothing; omit it for every source")
	}
	seen := make(map[string]bool, len(names))
	out := make([]string, 0, len(names))
	for _, name := range names {
		if strings.TrimSpace(name) == "" {
			return nil, bad("empty source name")
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	if len(out) > MaxKeySources {
		return nil, bad("%d sources, at most %d (omit the list for every source)", len(out), MaxKeySources)
	}
	existing, err := db.New(k.pool).ExistingSourceNames(ctx, out)
	if err != nil {
		return nil, fmt.Errorf("check key sources: %w", err)
	}
	found := make(map[string]bool, len(existing))
	for _, name := range existing {
		found[name] = true
	}
	var missing []string
	for _, name := range out {
		if !found[name] {
			missing = append(missing, strconv.Quote(name))
		}
	}
	switch {
	case len(missing) > 5:
		return nil, bad("no source is named %s and %d more; a key may name only existing sources", strings.Join(missing[:5], ", "), len(missing)-5)
	case len(missing) > 0:
		return nil, bad("no source is named %s; a key may name only existing sources", strings.Join(missing, ", "))
	}
	return out, nil
}

// IsKeyText reports whether text has the form of an API key (tg_...), so that a bearer
// credential that has not is taken for an OAuth access token.
func IsKeyText(text string) bool { return strings.HasPrefix(text, keyTag) }

// Verify returns the key of the full key text, or ErrInvalidKey or ErrRevokedKey.
func (k *Keys) Verify(ctx context.Context, text string) (Key, error) {
	rest, ok := strings.CutPrefix(text, keyTag)
	if !ok || len(rest) < prefixLen+2 || rest[prefixLen] != '_' {
		return Key{}, ErrInvalidKey
	}
	prefix, secret := rest[:prefixLen], rest[prefixLen+1:]
	row, err := db.New(k.pool).GetAPIKeyByPrefix(ctx, prefix)
	if errors.Is(err, pgx.ErrNoRows) {
		return Key{}, ErrInvalidKey
	}
	if err != nil {
		return Key{}, fmt.Errorf("look up API key: %w", err)
	}
	hash := sha256.Sum256([]byte(secret))
	if subtle.ConstantTimeCompare(hash[:], row.SecretHash) != 1 {
		return Key{}, ErrInvalidKey
	}
	if row.RevokedAt != nil {
		return Key{}, ErrRevokedKey
	}
	return toKey(row), nil
}

// Use counts one request of key in the current one-minute window (a fixed window shared by
// every instance through PostgreSQL) and refreshes its last use. It returns a
// *RateLimitError when the key is over its limit; the remaining requests of the window
// are returned for the RateLimit-Remaining header (-1 when unlimited).
func (k *Keys) Use(ctx context.Context, key Key) (remaining int, err error) {
	now := k.now()
	window := now.Truncate(rateWindow)
	hits, err := db.New(k.pool).CountAPIKeyUse(ctx, db.CountAPIKeyUseParams{KeyID: key.ID, WindowStart: window, Now: now})
	if err != nil {
		return 0, fmt.Errorf("count API key use: %w", err)
	}
	return remainingIn(window, now, int(hits), key.RatePerMin)
}

// UseSubject is Use for the caller of an OAuth access token, named by auth.OAuthName, whose
// limit is perMin (TOOLGATE_OAUTH_RATE_PER_MIN; 0: unlimited, and nothing is counted).
func (k *Keys) UseSubject(ctx context.Context, name string, perMin int) (remaining int, err error) {
	if perMin == 0 {
		return -1, nil
	}
	now := k.now()
	window := now.Truncate(rateWindow)
	hits, err := db.New(k.pool).CountOAuthSubjectUse(ctx, db.CountOAuthSubjectUseParams{Subject: name, WindowStart: window})
	if err != nil {
		return 0, fmt.Errorf("count OAuth subject use: %w", err)
	}
	return remainingIn(window, now, int(hits), perMin)
}

// remainingIn is what is left of limit (0: unlimited, -1 returned) in the window starting at
// window after hits requests, or a *RateLimitError past it.
func remainingIn(window, now time.Time, hits, limit int) (int, error) {
	if limit == 0 {
		return -1, nil
	}
	if hits > limit {
		return 0, &RateLimitError{Limit: limit, RetryAfter: window.Add(rateWindow).Sub(now)}
	}
	return limit - hits, nil
}

// List returns every key, revoked ones included, oldest first.
func (k *Keys) List(ctx context.Context) ([]Key, error) {
	rows, err := db.New(k.pool).ListAPIKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("list API keys: %w", err)
	}
	out := make([]Key, len(rows))
	for i, r := range rows {
		out[i] = toKey(r)
	}
	return out, nil
}

// Revoke revokes the key with prefix ref, or the active key named ref, and returns it.
// Revoking a revoked key keeps its first revocation time. The key's MCP sessions end with
// it, in the same transaction (endSessions).
func (k *Keys) Revoke(ctx context.Context, ref string) ([]Key, error) {
	var rows []db.ApiKey
	err := pgx.BeginFunc(ctx, k.pool, func(tx pgx.Tx) error {
		var err error
		if rows, err = db.New(tx).RevokeAPIKey(ctx, db.RevokeAPIKeyParams{Now: k.now(), Ref: ref}); err != nil {
			return err
		}
		return endKey(ctx, tx, rows...)
	})
	if err != nil {
		return nil, fmt.Errorf("revoke API key: %w", err)
	}
	if len(rows) == 0 {
		return nil, ErrKeyNotFound
	}
	out := make([]Key, len(rows))
	for i, r := range rows {
		out[i] = toKey(r)
	}
	return out, nil
}

// Active returns the active (not revoked) key named name, or ErrKeyNotFound.
func (k *Keys) Active(ctx context.Context, name string) (Key, error) {
	row, err := db.New(k.pool).GetActiveAPIKeyByName(ctx, name)
	if errors.Is(err, pgx.ErrNoRows) {
		return Key{}, ErrKeyNotFound
	}
	if err != nil {
		return Key{}, fmt.Errorf("API key %q: %w", name, err)
	}
	return toKey(row), nil
}

// RevokePrefix revokes the key with prefix, and ends its MCP sessions, as Revoke.
func (k *Keys) RevokePrefix(ctx context.Context, prefix string) (Key, error) {
	var row db.ApiKey
	err := pgx.BeginFunc(ctx, k.pool, func(tx pgx.Tx) error {
		var err error
		if row, err = db.New(tx).RevokeAPIKeyByPrefix(ctx, db.RevokeAPIKeyByPrefixParams{Now: k.now(), Prefix: prefix}); err != nil {
			return err
		}
		return endKey(ctx, tx, row)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return Key{}, ErrKeyNotFound
	}
	if err != nil {
		return Key{}, fmt.Errorf("revoke API key: %w", err)
	}
	return toKey(row), nil
}

// endKey deletes the MCP sessions and the memories of revoked keys. The gateway owns a
// session by its key's id and rebuilds one only from its row, so no instance serves these
// sessions again; an instance holding one in memory closes it when its sweep finds the row
// gone. The memories go in the same transaction, so that no search after the revocation
// learns from the key (the memory sweep drops the global ones the key helped make
// k-anonymous at its next run).
func endKey(ctx context.Context, tx pgx.Tx, keys ...db.ApiKey) error {
	ids := make([]int64, len(keys))
	for i, key := range keys {
		ids[i] = key.ID
	}
	if len(ids) == 0 {
		return nil
	}
	q := db.New(tx)
	if _, err := q.DeleteMemoriesOfKeys(ctx, ids); err != nil {
		return err
	}
	_, err := q.DeleteMCPSessionsOfKeys(ctx, ids)
	return err
}

// Caller is the caller a verified key makes.
func (key Key) Caller() *Caller {
	return &Caller{Name: key.Name, KeyID: key.ID, Scope: key.Scope, Sources: key.Sources, Plan: key.Plan,
		Tenant: key.tenantOf()}
}

// tenantOf is the tenant the key's searches teach and learn in: "" (the operator's) for an
// admin key, its tenant, else "key:<id>" (no tenant name has a ':').
func (key Key) tenantOf() string {
	switch {
	case key.Scope == ScopeAdmin:
		return ""
	case key.Tenant != nil:
		return *key.Tenant
	}
	return "key:" + strconv.FormatInt(key.ID, 10)
}

func toKey(r db.ApiKey) Key {
	k := Key{ID: r.ID, Name: r.Name, Prefix: r.Prefix, Scope: Scope(r.Scope), Sources: r.Sources,
		CreatedAt: r.CreatedAt, RevokedAt: r.RevokedAt, LastUsedAt: r.LastUsedAt, Tenant: r.Tenant}
	if r.RatePerMin.Valid {
		k.RatePerMin = int(r.RatePerMin.Int32)
	}
	if r.Plan != nil {
		k.Plan = plan.Mode(*r.Plan)
	}
	return k
}

// Allows reports whether scope s may do what need requires: admin may do everything.
func (s Scope) Allows(need Scope) bool {
	return s == ScopeAdmin || s == need
}
