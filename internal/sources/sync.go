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
)

// SourceNotFoundError: the source to sync does not exist (any more).
type SourceNotFoundError struct{ ID int64 }

func (e *SourceNotFoundError) Error() string        { return fmt.Sprintf("source %d not found", e.ID) }
func (e *SourceNotFoundError) Is(target error) bool { return target == derrors.NotFound }

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
	fail := func(err error) (SyncReport, error) {
		msg := err.Error()
		// The run is recorded even when ctx was cancelled (shutdown).
		recCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		skipped, _ := json.Marshal(rep.Skipped)
		if ferr := q.FinishSyncRun(recCtx, db.FinishSyncRunParams{ID: rep.RunID, State: db.SyncFailed, Skipped: skipped, Error: &msg}); ferr != nil {
			return rep, errors.Join(err, fmt.Errorf("record failed sync: %w", ferr))
		}
		return rep, fmt.Errorf("sync %s: %w", src.Name, err)
	}
	cfg, err := mcpclient.ParseConfig(src.Config)
	if err != nil {
		return fail(err)
	}
	listed, err := mcpclient.List(ctx, src.Kind, cfg, timeout, commands)
	if err != nil {
		return fail(err)
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		res, err := catalog.Apply(ctx, tx, src, listed, catalog.ApplyOptions{Review: src.ReviewMode, Validate: true})
		if err != nil {
			return err
		}
		rep.Skipped = rep.Skipped[:0]
		for _, bad := range res.Invalid {
			rep.Skipped = append(rep.Skipped, Skipped{Name: bad.Name, Reason: bad.Reason})
		}
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
	// After the commit, outside the catalog's locks: the synced tools (created, changed,
	// deleted, held back or reinstated) are searchable as they are now when the sync reports
	// success. With nothing queued this is one short transaction.
	if _, err := lexical.Flush(ctx, pool); err != nil {
		return rep, fmt.Errorf("sync %s: catalog stored, lexical index not updated yet: %w", src.Name, err)
	}
	return rep, nil
}

// AbandonSyncRuns marks failed the sync runs still 'running' more than after their start,
// which should be jobs.Deps.AbandonedAfter of sync_source (the job's timeout plus WindDown): a
// process that died mid-sync leaves them behind, and nothing else would end them. Every
// instance must use the same TOOLGATE_SYNC_TIMEOUT and TOOLGATE_JOB_TIMEOUT. It returns how
// many it marked.
func AbandonSyncRuns(ctx context.Context, pool *pgxpool.Pool, after time.Duration) (int64, error) {
	return db.New(pool).AbandonSyncRuns(ctx, after.Seconds())
}
