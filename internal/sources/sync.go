package sources

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/derrors"
	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/pgtext"
)

// NotMCPSourceError: only MCP sources are synced; catalog sources are pushed.
type NotMCPSourceError struct {
	Source string
	Kind   db.SourceKind
}

func (e *NotMCPSourceError) Error() string {
	return fmt.Sprintf("source %q is of kind %s; only mcp_stdio and mcp_http sources sync from a server", e.Source, e.Kind)
}

func (e *NotMCPSourceError) Is(target error) bool { return target == derrors.Conflict }
func (e *NotMCPSourceError) Code() string         { return "wrong_source_kind" }

// Skipped is a tool a sync left out, with the reason.
type Skipped struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// SyncReport is what one sync did.
type SyncReport struct {
	RunID   int64          `json:"run_id"`
	Source  string         `json:"source"`
	Result  catalog.Result `json:"result"`
	Skipped []Skipped      `json:"skipped"`
}

// Sync runs one sync of an MCP source (ScaleMCP Algorithm 1): it lists the server's
// tools outside any transaction, within timeout, then applies the whole diff in one
// transaction together with the follow-up jobs of the changed tools. Every attempt is
// recorded as a sync run. An error leaves the source's tools as they were. An mcp_stdio
// source's stored command must still be one commands allows, or nothing is started and the
// run fails with a *mcpclient.CommandNotAllowedError.
func Sync(ctx context.Context, pool *pgxpool.Pool, queue Queue, sourceID int64, timeout time.Duration, commands mcpclient.CommandPolicy) (SyncReport, error) {
	return SyncWith(ctx, pool, queue, sourceID, SyncOptions{Timeout: timeout, Commands: commands})
}

// SyncOptions are how one sync reaches and bounds its server.
type SyncOptions struct {
	// Timeout bounds connecting and listing (TOOLGATE_SYNC_TIMEOUT).
	Timeout time.Duration
	// Commands are the programs an mcp_stdio source may run (TOOLGATE_STDIO_COMMANDS).
	Commands mcpclient.CommandPolicy
	// Limits bound the listing (TOOLGATE_MAX_TOOLS_PER_SOURCE, TOOLGATE_MAX_LIST_BYTES);
	// the zero value is mcpclient.DefaultLimits.
	Limits mcpclient.Limits
	// Auth gives the access token of an mcp_http source configured for OAuth
	// (upstreamauth.Manager); nil refuses such a source (mcpclient.ErrNoAuthorizer).
	Auth mcpclient.Authorizer
}

// SyncWith is Sync with every option, the listing's limits included.
func SyncWith(ctx context.Context, pool *pgxpool.Pool, queue Queue, sourceID int64, opts SyncOptions) (SyncReport, error) {
	q := db.New(pool)
	rep := SyncReport{Skipped: []Skipped{}}
	src, err := q.GetSourceByID(ctx, sourceID)
	if errors.Is(err, pgx.ErrNoRows) {
		return rep, &SourceNotFoundError{ID: sourceID}
	}
	if err != nil {
		return rep, err
	}
	rep.Source = src.Name
	if !src.Kind.IsMCP() {
		return rep, &NotMCPSourceError{Source: src.Name, Kind: src.Kind}
	}
	if rep.RunID, err = q.StartSyncRun(ctx, src.ID); err != nil {
		return rep, err
	}
	finished := false
	fail := func(err error) (SyncReport, error) {
		finished = true
		return rep, recordFailure(ctx, q, src.Name, rep, err)
	}
	// A sync that dies midway (a panic in a follow-up, in the worker's goroutine) still
	// ends its run: a run left 'running' would show as running until the periodic job
	// abandons it minutes later. The panic goes on to the caller (River recovers it).
	defer func() {
		if finished {
			return
		}
		if p := recover(); p != nil {
			_ = recordFailure(ctx, q, src.Name, rep, fmt.Errorf("sync stopped: panic: %v", p))
			panic(p)
		}
	}()
	cfg, err := mcpclient.ParseConfig(src.Config)
	if err != nil {
		return fail(err)
	}
	listed, err := mcpclient.List(ctx, src.Kind, cfg, opts.Timeout, mcpclient.Options{Commands: opts.Commands, Limits: opts.Limits,
		Auth: opts.Auth, Source: src.Name})
	if err != nil {
		return fail(err)
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		res, err := catalog.Apply(ctx, tx, src, listed, catalog.ApplyOptions{Review: src.ReviewMode, Validate: true})
		if err != nil {
			return err
		}
		rep.Skipped = skippedOf(res.Invalid)
		skipped, err := json.Marshal(rep.Skipped)
		if err != nil {
			return err
		}
		if err := queue.EnrichTx(ctx, tx, res.Changed); err != nil {
			return err
		}
		rep.Result = res
		return db.New(tx).FinishSyncRun(ctx, db.FinishSyncRunParams{
			ID: rep.RunID, State: db.SyncSucceeded, Created: int32(res.Created), Updated: int32(res.Updated),
			Deleted: int32(res.Deleted), Unchanged: int32(res.Unchanged), Pending: int32(res.Pending), Skipped: skipped,
		})
	})
	if err != nil {
		return fail(err)
	}
	finished = true
	// After the commit, outside the catalog's locks: the synced tools (created, changed,
	// deleted, held back or reinstated) are searchable as they are now when the sync reports
	// success. With nothing queued this is one short transaction.
	if _, err := lexical.Flush(ctx, pool); err != nil {
		return rep, fmt.Errorf("sync %s: catalog stored, lexical index not updated yet: %w", src.Name, err)
	}
	return rep, nil
}

// MaxErrorLen bounds the error text a failed sync run records, in bytes: an upstream's
// error message is recorded as part of it, and its length is the upstream's choice.
const MaxErrorLen = 4096

// maxReasonLen bounds the reason a skipped tool is recorded with.
const maxReasonLen = 1024

// skippedOf reports the tools Apply left out. Their names are the server's and may hold
// anything (a NUL, invalid UTF-8, 100 kB): catalog.ReportName escapes and bounds them, so
// that the record of the run can always be written.
func skippedOf(invalid []*catalog.InvalidToolError) []Skipped {
	out := make([]Skipped, 0, len(invalid))
	for _, bad := range invalid {
		out = append(out, Skipped{Name: catalog.ReportName(bad.Name), Reason: pgtext.Storable(bad.Reason, maxReasonLen)})
	}
	return out
}

// FailedError is a sync that failed and was recorded so. Its text is the recorded one:
// storable and bounded (MaxErrorLen), whatever the upstream put in its error, since River
// stores it too (the job's errors) and a text PostgreSQL refuses would fail that write.
// Unwrap gives the original error.
type FailedError struct {
	Source string
	Msg    string
	Err    error
}

func (e *FailedError) Error() string { return "sync " + e.Source + ": " + e.Msg }
func (e *FailedError) Unwrap() error { return e.Err }

// recordFailure ends the run of rep as failed with err. The record is written even when
// ctx was cancelled (shutdown), and it cannot fail on what it holds: the error text is
// made storable and bounded, the skipped list is already (skippedOf). If the write still
// fails (the database refused it for another reason), a fixed text is tried once more.
func recordFailure(ctx context.Context, q *db.Queries, source string, rep SyncReport, err error) error {
	msg := pgtext.Storable(err.Error(), MaxErrorLen)
	recCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	skipped, _ := json.Marshal(rep.Skipped)
	ferr := q.FinishSyncRun(recCtx, db.FinishSyncRunParams{ID: rep.RunID, State: db.SyncFailed, Skipped: skipped, Error: &msg})
	if ferr != nil {
		fallback := "the sync failed, and its error could not be recorded: " + pgtext.Storable(ferr.Error(), MaxErrorLen/2)
		if q.FinishSyncRun(recCtx, db.FinishSyncRunParams{ID: rep.RunID, State: db.SyncFailed, Skipped: []byte("[]"), Error: &fallback}) != nil {
			return &FailedError{Source: source, Msg: msg + "; record failed sync: " + pgtext.Storable(ferr.Error(), MaxErrorLen), Err: errors.Join(err, ferr)}
		}
	}
	return &FailedError{Source: source, Msg: msg, Err: err}
}

// AbandonSyncRuns marks failed the sync runs still 'running' more than after their start,
// which should be jobs.Deps.AbandonedAfter of sync_source (the job's timeout plus WindDown): a
// process that died mid-sync leaves them behind, and nothing else would end them. Every
// instance must use the same TOOLGATE_SYNC_TIMEOUT and TOOLGATE_JOB_TIMEOUT. It returns how
// many it marked.
func AbandonSyncRuns(ctx context.Context, pool *pgxpool.Pool, after time.Duration) (int64, error) {
	return db.New(pool).AbandonSyncRuns(ctx, after.Seconds())
}
