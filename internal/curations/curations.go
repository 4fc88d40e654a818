// Package curations manages what an operator decides of a ranking (docs/curations.md):
// query rules that pin, hide or boost a tool for the queries they match, synonyms of the
// query's words, and the per-tool switch of the knowledge expansion. The search statement
// applies rules and synonyms itself (sql/functions/curations.sql); this package holds their
// checks and writes, for the API and the console.
package curations

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/derrors"
	"github.com/toolgate/toolgate/internal/pgtext"
)

// The kinds of match and the actions of a rule.
const (
	MatchExact    = "exact"
	MatchContains = "contains"
	ActionPin     = "pin"
	ActionHide    = "hide"
	ActionBoost   = "boost"
)

// Limits of a rule and a synonym list (the table's CHECKs say the same).
const (
	maxPattern  = 200
	maxBoost    = 100.0
	maxPosition = 100
	maxSynonyms = 20
	maxWord     = 64
)

// tenantName is a tenant a rule may belong to as stored: a key tenant's name or 'key:<id>'.
var tenantName = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9._-]{0,63}|key:[0-9]+)$`)

// keyTenant is a tenant given by the name of a key whose searches are its: 'key:<name>'.
var keyTenant = regexp.MustCompile(`^key:([A-Za-z0-9][A-Za-z0-9._-]{0,63})$`)

// word is a synonym's word: what toolgate_rule_words splits a query into.
var word = regexp.MustCompile(`^[\p{L}\p{N}_]+$`)

// Rule is a query rule.
type Rule struct {
	ID int64 `json:"id"`
	// Tenant is the tenant whose searches the rule acts on; nil: every search.
	Tenant    *string   `json:"tenant"`
	Match     string    `json:"match"`
	Pattern   string    `json:"pattern"`
	Action    string    `json:"action"`
	Tool      string    `json:"tool"`
	Boost     *float64  `json:"boost,omitempty"`
	Position  *int      `json:"position,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	CreatedBy *string   `json:"created_by"`
}

// Synonyms are a word's synonyms, appended to a query that holds the word before its
// lexical analysis.
type Synonyms struct {
	ID        int64     `json:"id"`
	Tenant    *string   `json:"tenant"`
	Word      string    `json:"word"`
	Synonyms  []string  `json:"synonyms"`
	CreatedAt time.Time `json:"created_at"`
	CreatedBy *string   `json:"created_by"`
}

// InvalidError is a rule or synonym list the service refuses.
type InvalidError struct {
	Field, Reason string
}

func (e *InvalidError) Error() string        { return fmt.Sprintf("%s: %s", e.Field, e.Reason) }
func (e *InvalidError) Is(target error) bool { return target == derrors.Invalid }

// NotFoundError is a rule or synonym list id that does not exist.
type NotFoundError struct {
	Kind string
	ID   int64
}

func (e *NotFoundError) Error() string        { return fmt.Sprintf("%s %d not found", e.Kind, e.ID) }
func (e *NotFoundError) Is(target error) bool { return target == derrors.NotFound }

// Service reads and writes the curations.
type Service struct {
	Pool *pgxpool.Pool
}

// Rules are every rule, oldest first.
func (s *Service) Rules(ctx context.Context) ([]Rule, error) {
	rows, err := db.New(s.Pool).ListSearchRules(ctx)
	if err != nil {
		return nil, err
	}
	shown, err := s.shownTenants(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Rule, len(rows))
	for i, r := range rows {
		out[i] = ruleOf(r)
		out[i].Tenant = shown(out[i].Tenant)
	}
	return out, nil
}

// CreateRule checks r and stores it, by the caller named by.
func (s *Service) CreateRule(ctx context.Context, r Rule, by string) (Rule, error) {
	r.Pattern = strings.TrimSpace(r.Pattern)
	r.Tool = strings.TrimSpace(r.Tool)
	var err error
	if r.Tenant, err = s.tenant(ctx, r.Tenant); err != nil {
		return Rule{}, err
	}
	switch r.Match {
	case MatchExact, MatchContains:
	default:
		return Rule{}, &InvalidError{"match", fmt.Sprintf("%q is not exact or contains", r.Match)}
	}
	if err := checkText("pattern", r.Pattern, maxPattern); err != nil {
		return Rule{}, err
	}
	q := db.New(s.Pool)
	words, err := q.SearchRuleWords(ctx, r.Pattern)
	if err != nil {
		return Rule{}, err
	}
	if len(words) == 0 {
		return Rule{}, &InvalidError{"pattern", "has no word (letters or digits): it would match no query"}
	}
	if err := checkText("tool", r.Tool, maxPattern); err != nil {
		return Rule{}, err
	}
	if _, err := q.GetToolByName(ctx, r.Tool); errors.Is(err, pgx.ErrNoRows) {
		return Rule{}, &catalog.ToolNotFoundError{Name: r.Tool}
	} else if err != nil {
		return Rule{}, err
	}
	switch r.Action {
	case ActionPin:
		if r.Position == nil || *r.Position < 1 || *r.Position > maxPosition || r.Boost != nil {
			return Rule{}, &InvalidError{"position", fmt.Sprintf("a pin takes a position from 1 to %d, and no boost", maxPosition)}
		}
	case ActionBoost:
		if r.Boost == nil || !(*r.Boost > 0 && *r.Boost <= maxBoost) || r.Position != nil {
			return Rule{}, &InvalidError{"boost", fmt.Sprintf("a boost takes a factor above 0 and at most %g, and no position", maxBoost)}
		}
	case ActionHide:
		if r.Boost != nil || r.Position != nil {
			return Rule{}, &InvalidError{"action", "a hide takes no boost and no position"}
		}
	default:
		return Rule{}, &InvalidError{"action", fmt.Sprintf("%q is not pin, hide or boost", r.Action)}
	}
	p := db.InsertSearchRuleParams{Tenant: r.Tenant, Match: r.Match, Pattern: r.Pattern, Action: r.Action, Tool: r.Tool,
		CreatedBy: optional(by)}
	if r.Boost != nil {
		p.Boost = pgtype.Float8{Float64: *r.Boost, Valid: true}
	}
	if r.Position != nil {
		p.Position = pgtype.Int4{Int32: int32(*r.Position), Valid: true}
	}
	row, err := q.InsertSearchRule(ctx, p)
	if err != nil {
		return Rule{}, err
	}
	out := ruleOf(row)
	if out.Tenant, err = s.shownTenant(ctx, out.Tenant); err != nil {
		return Rule{}, err
	}
	return out, nil
}

// DeleteRule removes rule id.
func (s *Service) DeleteRule(ctx context.Context, id int64) error {
	n, err := db.New(s.Pool).DeleteSearchRule(ctx, id)
	if err != nil {
		return err
	}
	if n == 0 {
		return &NotFoundError{Kind: "rule", ID: id}
	}
	return nil
}

// Synonyms are every synonym list, the global ones first.
func (s *Service) Synonyms(ctx context.Context) ([]Synonyms, error) {
	rows, err := db.New(s.Pool).ListSearchSynonyms(ctx)
	if err != nil {
		return nil, err
	}
	shown, err := s.shownTenants(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Synonyms, len(rows))
	for i, r := range rows {
		out[i] = Synonyms(r)
		out[i].Tenant = shown(out[i].Tenant)
	}
	return out, nil
}

// PutSynonyms sets the synonyms of a word for a tenant (nil: every search), replacing the
// ones it had. Words are lower-cased; each is one word as queries are split into.
func (s *Service) PutSynonyms(ctx context.Context, in Synonyms, by string) (Synonyms, error) {
	var err error
	if in.Tenant, err = s.tenant(ctx, in.Tenant); err != nil {
		return Synonyms{}, err
	}
	in.Word = strings.ToLower(strings.TrimSpace(in.Word))
	if err := checkWord("word", in.Word); err != nil {
		return Synonyms{}, err
	}
	if len(in.Synonyms) == 0 || len(in.Synonyms) > maxSynonyms {
		return Synonyms{}, &InvalidError{"synonyms", fmt.Sprintf("1 to %d words", maxSynonyms)}
	}
	syns := make([]string, len(in.Synonyms))
	for i, w := range in.Synonyms {
		syns[i] = strings.ToLower(strings.TrimSpace(w))
		if err := checkWord(fmt.Sprintf("synonyms[%d]", i), syns[i]); err != nil {
			return Synonyms{}, err
		}
	}
	row, err := db.New(s.Pool).PutSearchSynonym(ctx, db.PutSearchSynonymParams{Tenant: in.Tenant, Word: in.Word,
		Synonyms: syns, CreatedBy: optional(by)})
	if err != nil {
		return Synonyms{}, err
	}
	out := Synonyms(row)
	if out.Tenant, err = s.shownTenant(ctx, out.Tenant); err != nil {
		return Synonyms{}, err
	}
	return out, nil
}

// DeleteSynonyms removes synonym list id.
func (s *Service) DeleteSynonyms(ctx context.Context, id int64) error {
	n, err := db.New(s.Pool).DeleteSearchSynonym(ctx, id)
	if err != nil {
		return err
	}
	if n == 0 {
		return &NotFoundError{Kind: "synonyms", ID: id}
	}
	return nil
}

// SetExpansionOffTx switches the knowledge expansion of tool name off (or back on) in tx
// and returns the tool's id: its next enrichment leaves the expansion out (or in), which the
// caller queues in the same transaction.
func (s *Service) SetExpansionOffTx(ctx context.Context, tx pgx.Tx, name string, off bool) (int64, error) {
	id, err := db.New(tx).SetToolExpansionOff(ctx, db.SetToolExpansionOffParams{Name: name, Off: off})
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, &catalog.ToolNotFoundError{Name: name}
	}
	return id, err
}

func ruleOf(r db.SearchRule) Rule {
	out := Rule{ID: r.ID, Tenant: r.Tenant, Match: r.Match, Pattern: r.Pattern, Action: r.Action, Tool: r.Tool,
		CreatedAt: r.CreatedAt, CreatedBy: r.CreatedBy}
	if r.Boost.Valid {
		out.Boost = &r.Boost.Float64
	}
	if r.Position.Valid {
		p := int(r.Position.Int32)
		out.Position = &p
	}
	return out
}

// shownTenants returns how a stored tenant is shown: key:<id> of an active key as
// key:<name>, as analytics and the console name it (a revoked key's id stays: its name may
// be another key's now); any other tenant as it is.
func (s *Service) shownTenants(ctx context.Context) (func(*string) *string, error) {
	keys, err := auth.NewKeys(s.Pool, time.Now).List(ctx)
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	for _, k := range keys {
		if k.RevokedAt == nil && k.Scope != auth.ScopeAdmin && k.Tenant == nil {
			names[k.Caller().Tenant] = "key:" + k.Name
		}
	}
	return func(t *string) *string {
		if t == nil {
			return nil
		}
		if name, ok := names[*t]; ok {
			return &name
		}
		return t
	}, nil
}

// shownTenant is the stored tenant t as shownTenants shows it.
func (s *Service) shownTenant(ctx context.Context, t *string) (*string, error) {
	shown, err := s.shownTenants(ctx)
	if err != nil {
		return nil, err
	}
	return shown(t), nil
}

// tenant checks t and returns it as it is stored: a key tenant's name, or key:<id> for a key
// that is a tenant of its own. key:<name> is the tenant of the active key of that name (its
// tenant, or key:<id>), as analytics and the console name a key's tenant; key:<digits> is
// an id.
func (s *Service) tenant(ctx context.Context, t *string) (*string, error) {
	if t == nil || tenantName.MatchString(*t) {
		return t, nil
	}
	m := keyTenant.FindStringSubmatch(*t)
	if m == nil {
		return nil, &InvalidError{"tenant", "a key tenant's name (letters, digits, '.', '_', '-'; at most 64), key:<key name> or key:<id>; absent for every search"}
	}
	key, err := auth.NewKeys(s.Pool, time.Now).Active(ctx, m[1])
	if errors.Is(err, auth.ErrKeyNotFound) {
		return nil, &InvalidError{"tenant", fmt.Sprintf("no active key is named %q", m[1])}
	}
	if err != nil {
		return nil, err
	}
	tenant := key.Caller().Tenant
	if tenant == "" {
		return nil, &InvalidError{"tenant", fmt.Sprintf("%q is an admin key: its searches read the rules and synonyms of every search only", m[1])}
	}
	return &tenant, nil
}

func checkText(field, s string, limit int) error {
	if p := pgtext.Problem(s); p != "" {
		return &InvalidError{field, p}
	}
	if s == "" {
		return &InvalidError{field, "must not be empty"}
	}
	if utf8.RuneCountInString(s) > limit {
		return &InvalidError{field, fmt.Sprintf("at most %d characters", limit)}
	}
	return nil
}

func checkWord(field, w string) error {
	if utf8.RuneCountInString(w) > maxWord || !word.MatchString(w) {
		return &InvalidError{field, fmt.Sprintf("one word of letters, digits or '_', at most %d characters", maxWord)}
	}
	return nil
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
