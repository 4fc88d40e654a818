package sources

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/derrors"
	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/mcpclient"
)

// Bounds of a source's sync interval. The lower bound is also a CHECK in the schema.
const (
	MinSyncInterval = 10 * time.Second
	MaxSyncInterval = 30 * 24 * time.Hour
	// DefaultSyncInterval is the interval of an MCP source created without one.
	DefaultSyncInterval = time.Hour
)

// SourceNotFoundError is a source, named or by id, that does not exist (any more).
type SourceNotFoundError struct {
	Name string
	ID   int64 // when looked up by id (a sync job's source)
}

func (e *SourceNotFoundError) Error() string {
	if e.Name == "" {
		return fmt.Sprintf("source %d not found", e.ID)
	}
	return fmt.Sprintf("source %q not found", e.Name)
}

func (e *SourceNotFoundError) Is(target error) bool { return target == derrors.NotFound }

// SourceExistsError: a source of that name already exists.
type SourceExistsError struct{ Name string }

func (e *SourceExistsError) Error() string        { return fmt.Sprintf("source %q already exists", e.Name) }
func (e *SourceExistsError) Is(target error) bool { return target == derrors.Conflict }

// InvalidSourceError is a source's name, kind or setting that the rules refuse.
type InvalidSourceError struct{ Reason string }

func (e *InvalidSourceError) Error() string        { return e.Reason }
func (e *InvalidSourceError) Is(target error) bool { return target == derrors.Invalid }

func invalid(format string, args ...any) error {
	return &InvalidSourceError{Reason: fmt.Sprintf(format, args...)}
}

// LifecycleQueue is the work a source's life cycle queues or drops inside its own
// transaction, so that it happens if and only if the change commits. Package jobs
// implements it (jobs.Queue).
type LifecycleQueue interface {
	Queue
	// SyncTx queues, inside tx, a sync of the source.
	SyncTx(ctx context.Context, tx pgx.Tx, sourceID int64) (int64, error)
	// Sync queues a sync of the source now; a sync already waiting or running is returned
	// with duplicate set.
	Sync(ctx context.Context, sourceID int64) (jobID int64, duplicate bool, err error)
	// DeleteWaitingEnrichTx deletes, inside tx, the enrichment jobs of the named source's
	// tools that have not started.
	DeleteWaitingEnrichTx(ctx context.Context, tx pgx.Tx, source string) (int64, error)
}

// Service owns a source's life cycle: creating it (with its first sync or its first
// import), changing its settings, deleting it, and looking it up by name. Every caller,
// the HTTP API, the CLI and the test fixtures alike, gets the same rules and errors.
type Service struct {
	Pool  *pgxpool.Pool
	Queue LifecycleQueue
	// Commands are the programs an mcp_stdio source may run (TOOLGATE_STDIO_COMMANDS).
	Commands mcpclient.CommandPolicy
	Logger   *slog.Logger
	// OAuthReady says whether sources configured for OAuth can hold tokens
	// (upstreamauth.Manager.Ready: a secret key is configured); nil refuses them.
	OAuthReady func() error
}

// ByName reads the source called name with q: a *SourceNotFoundError when there is none.
func ByName(ctx context.Context, q *db.Queries, name string) (db.Source, error) {
	src, err := q.GetSourceByName(ctx, name)
	if errors.Is(err, pgx.ErrNoRows) {
		return src, &SourceNotFoundError{Name: name}
	}
	return src, err
}

// Get reads the source called name.
func (s *Service) Get(ctx context.Context, name string) (db.Source, error) {
	return ByName(ctx, db.New(s.Pool), name)
}

// Summaries lists every source, or only the one called name, with its tool counts and
// its last sync run, in one query whatever the number of sources.
func (s *Service) Summaries(ctx context.Context, name *string) ([]db.ListSourceSummariesRow, error) {
	return db.New(s.Pool).ListSourceSummaries(ctx, name)
}

// MCPSettings are the settings of an MCP source. A nil Interval means
// DefaultSyncInterval.
type MCPSettings struct {
	Command    string
	Args       []string
	Env        map[string]string
	URL        string
	Headers    map[string]string
	OAuth      *mcpclient.OAuthConfig
	Interval   *string
	ReviewMode bool
}

// NewSource is a source to create: a catalog source with its tools, or an MCP source with
// its settings.
type NewSource struct {
	Name string
	Kind db.SourceKind
	// Tools are a catalog source's tool definitions, each in any format catalog.Parse
	// reads.
	Tools []json.RawMessage
	MCP   MCPSettings
	// CheckTools, when set, bounds the number of tools one request may bring; it is
	// called with the parsed count before anything is written.
	CheckTools func(n int) error
}

// Created is what Create did.
type Created struct {
	Source db.Source
	// Result is the import of a catalog source's tools.
	Result catalog.Result
	// SyncJobID is the first sync of an MCP source, queued in the transaction that
	// created it.
	SyncJobID int64
}

// Create creates a source. A catalog source is created by importing its tools; an MCP
// source's config is validated, its stdio command checked against the allowlist, and its
// first sync queued in the same transaction. The checks run in a fixed order (name, kind,
// whether the name is free, then the kind's own fields), so that a request wrong in
// several ways is always told the same thing.
func (s *Service) Create(ctx context.Context, in NewSource) (Created, error) {
	if !catalog.ValidSourceName(in.Name) {
		return Created{}, invalid("name %q: want 1-32 characters of a-z 0-9 and -, the first not -", in.Name)
	}
	switch in.Kind {
	case db.SourceCatalog:
	case mcpclient.KindStdio, mcpclient.KindHTTP:
		if len(in.Tools) > 0 {
			return Created{}, invalid("tools: an MCP source's tools come from its server")
		}
	default:
		return Created{}, invalid("kind %q: want catalog, mcp_stdio or mcp_http", in.Kind)
	}
	if _, err := s.Get(ctx, in.Name); err == nil {
		return Created{}, &SourceExistsError{Name: in.Name}
	} else if !errors.Is(err, derrors.NotFound) {
		return Created{}, err
	}
	if in.Kind != db.SourceCatalog {
		return s.createMCP(ctx, in.Name, in.Kind, in.MCP)
	}
	if !reflect.ValueOf(in.MCP).IsZero() {
		return Created{}, invalid("command, args, env, url, headers, oauth, interval and review_mode are for MCP sources")
	}
	tools, err := parseInlineTools(in.Tools)
	if err != nil {
		return Created{}, err
	}
	if in.CheckTools != nil {
		if err := in.CheckTools(len(tools)); err != nil {
			return Created{}, err
		}
	}
	src, res, err := Import(ctx, s.Pool, s.Queue, in.Name, tools)
	return Created{Source: src, Result: res}, err
}

// parseInlineTools reads the tools of a request through the catalog parser, so every
// supported format and every validation rule applies; line numbers become positions.
func parseInlineTools(raw []json.RawMessage) ([]catalog.Tool, error) {
	if len(raw) == 0 {
		return nil, invalid("tools: a catalog source needs at least one tool")
	}
	var buf bytes.Buffer
	for _, r := range raw {
		var compact bytes.Buffer
		if err := json.Compact(&compact, r); err != nil {
			return nil, invalid("tools: %v", err)
		}
		buf.Write(compact.Bytes())
		buf.WriteByte('\n')
	}
	return catalog.Parse(&buf)
}

// createMCP creates an MCP source and queues its first sync in the same transaction.
func (s *Service) createMCP(ctx context.Context, name string, kind db.SourceKind, f MCPSettings) (Created, error) {
	cfg := mcpclient.Config{Command: f.Command, Args: f.Args, Env: f.Env, URL: f.URL, Headers: f.Headers, OAuth: f.OAuth}
	if err := s.checkConfig(kind, cfg); err != nil {
		return Created{}, err
	}
	interval := pgtype.Interval{Microseconds: DefaultSyncInterval.Microseconds(), Valid: true}
	if f.Interval != nil {
		var err error
		if interval, err = ParseInterval(*f.Interval); err != nil {
			return Created{}, err
		}
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return Created{}, err
	}
	var out Created
	err = pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		var err error
		out.Source, err = db.New(tx).CreateSource(ctx, db.CreateSourceParams{
			Name: name, Kind: kind, Config: raw, SyncInterval: interval, ReviewMode: f.ReviewMode,
		})
		if err != nil {
			return err
		}
		out.SyncJobID, err = s.Queue.SyncTx(ctx, tx, out.Source.ID)
		return err
	})
	return out, err
}

// checkConfig validates an MCP source's config and, for mcp_stdio, checks its command
// and env against the operator's allowlist (a *mcpclient.CommandNotAllowedError).
func (s *Service) checkConfig(kind db.SourceKind, cfg mcpclient.Config) error {
	if err := cfg.Validate(kind); err != nil {
		return err
	}
	if kind == mcpclient.KindStdio {
		return s.Commands.Check(cfg)
	}
	if cfg.OAuth != nil {
		if s.OAuthReady == nil {
			return mcpclient.ErrNoAuthorizer
		}
		return s.OAuthReady()
	}
	return nil
}

// ParseInterval reads a sync interval: a Go duration ("10m") from MinSyncInterval to
// MaxSyncInterval, or "off" for on-demand only (the invalid interval).
func ParseInterval(s string) (pgtype.Interval, error) {
	if s == "off" {
		return pgtype.Interval{}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < MinSyncInterval || d > MaxSyncInterval {
		return pgtype.Interval{}, invalid(`interval %q: want a duration from 10s to 720h (e.g. "10m"), or "off"`, s)
	}
	return pgtype.Interval{Microseconds: d.Microseconds(), Valid: true}, nil
}

// FormatInterval writes a stored sync interval as ParseInterval reads it.
func FormatInterval(iv pgtype.Interval) string {
	if !iv.Valid {
		return "off"
	}
	d := time.Duration(iv.Microseconds)*time.Microsecond + time.Duration(iv.Days)*24*time.Hour
	return d.String()
}

// Change changes an MCP source's settings; nil fields stay as they are.
type Change struct {
	Interval   *string
	ReviewMode *bool
	Command    *string
	Args       *[]string
	Env        *map[string]string
	URL        *string
	Headers    *map[string]string
	// OAuth replaces the source's OAuth settings; an empty client_id and scope
	// ({}) keeps OAuth with dynamic registration.
	OAuth *mcpclient.OAuthConfig
}

// Update changes the settings of the MCP source called name. A changed config (command,
// args, env, url, headers, oauth) is validated and checked against the allowlist, and a sync
// of the new server is queued in the same transaction; an OAuth source whose url or oauth
// changes forgets its tokens, which were issued for the old ones. An unchanged config is not checked
// again: a source stored before the allowlist changed may still get a new interval, and
// its syncs are refused.
func (s *Service) Update(ctx context.Context, name string, ch Change) (db.Source, error) {
	var src db.Source
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		old, err := mcpSource(ctx, q, name)
		if err != nil {
			return err
		}
		cfg, err := mcpclient.ParseConfig(old.Config)
		if err != nil {
			return err
		}
		before := cfg // set replaces whole fields, so a shallow copy keeps the old ones
		set(&cfg.Command, ch.Command)
		set(&cfg.Args, ch.Args)
		set(&cfg.Env, ch.Env)
		set(&cfg.URL, ch.URL)
		set(&cfg.Headers, ch.Headers)
		if ch.OAuth != nil {
			cfg.OAuth = ch.OAuth
		}
		// compared as values: the stored jsonb text is not byte-for-byte what json.Marshal
		// writes
		changed := !reflect.DeepEqual(before, cfg)
		if changed {
			if err := s.checkConfig(old.Kind, cfg); err != nil {
				return err
			}
		}
		interval, review := old.SyncInterval, old.ReviewMode
		if ch.Interval != nil {
			if interval, err = ParseInterval(*ch.Interval); err != nil {
				return err
			}
		}
		set(&review, ch.ReviewMode)
		raw, err := json.Marshal(cfg)
		if err != nil {
			return err
		}
		src, err = q.UpdateSourceSettings(ctx, db.UpdateSourceSettingsParams{ID: old.ID, Config: raw, SyncInterval: interval, ReviewMode: review})
		if errors.Is(err, pgx.ErrNoRows) { // deleted since mcpSource read it
			return &SourceNotFoundError{Name: name}
		}
		if err != nil {
			return err
		}
		if changed && before.OAuth != nil && (cfg.URL != before.URL || !reflect.DeepEqual(cfg.OAuth, before.OAuth)) {
			// The tokens were issued for the old server (RFC 8707 resource) and client: never
			// send them to another. The source is authorized again for the new one.
			if err := q.RevokeSourceOAuth(ctx, src.ID); err != nil {
				return err
			}
		}
		if changed { // a new server: sync it now
			_, err = s.Queue.SyncTx(ctx, tx, src.ID)
		}
		return err
	})
	return src, err
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// mcpSource reads an MCP source by name: a *SourceNotFoundError when missing, a
// *NotMCPSourceError for a catalog source.
func mcpSource(ctx context.Context, q *db.Queries, name string) (db.Source, error) {
	src, err := ByName(ctx, q, name)
	if err != nil {
		return src, err
	}
	if !src.Kind.IsMCP() {
		return src, &NotMCPSourceError{Source: src.Name, Kind: src.Kind}
	}
	return src, nil
}

// SyncNow queues a sync of the MCP source called name. When a sync of the source is
// already waiting or running, that job's id is returned with duplicate set.
func (s *Service) SyncNow(ctx context.Context, name string) (jobID int64, duplicate bool, err error) {
	src, err := mcpSource(ctx, db.New(s.Pool), name)
	if err != nil {
		return 0, false, err
	}
	return s.Queue.Sync(ctx, src.ID)
}

// Delete deletes the source called name, its tools with it, and the enrichment jobs of
// those tools that still wait, in one transaction; then it flushes the lexical index.
func (s *Service) Delete(ctx context.Context, name string) error {
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		src, err := ByName(ctx, q, name)
		if err != nil {
			return err
		}
		// The source's lock first, as every catalog writer takes it (docs/architecture.md,
		// Lock order): an import under way commits its tools and their jobs before these
		// are deleted, rather than queueing jobs after.
		if err := q.LockSource(ctx, int32(src.ID)); err != nil {
			return err
		}
		dropped, err := s.Queue.DeleteWaitingEnrichTx(ctx, tx, name)
		if err != nil {
			return err
		}
		n, err := q.DeleteSource(ctx, name)
		if err != nil {
			return err
		}
		if n == 0 { // deleted meanwhile, by a request that held the lock first
			return &SourceNotFoundError{Name: name}
		}
		if dropped > 0 && s.Logger != nil {
			s.Logger.InfoContext(ctx, "deleted the waiting enrichment jobs of a deleted source", "source", name, "jobs", dropped)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// The search never returns a deleted tool (it checks every result against tools); this
	// drops the index rows now rather than at the next lexical_index run. A caller that
	// goes away does not stop it: the source is deleted either way.
	_, err = lexical.Flush(context.WithoutCancel(ctx), s.Pool)
	return err
}
