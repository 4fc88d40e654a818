package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/metrics"
)

// SyncArgs syncs one MCP source: list its server's tools, apply the diff.
type SyncArgs struct {
	SourceID int64 `json:"source_id"`
}

func (SyncArgs) Kind() string { return "sync_source" }

// InsertOpts makes a sync unique per source across every non-final state: however many
// syncs of a source are asked for, at most one waits or runs. catalog.Apply's per-source
// lock also serializes a sync run outside River (`toolgate sync`).
func (SyncArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{
		MaxAttempts: 8,
		UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
			rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
			rivertype.JobStateRetryable, rivertype.JobStateScheduled,
		}},
	}
}

// SyncWorker works SyncArgs. A failed sync returns its error, so River retries it with
// backoff; the source's tools are untouched by a failure.
type SyncWorker struct {
	river.WorkerDefaults[SyncArgs]
	deps Deps
}

// DefaultSyncTimeout is used when Deps.SyncTimeout is not set.
const DefaultSyncTimeout = time.Minute

func (d Deps) syncTimeout() time.Duration {
	if d.SyncTimeout > 0 {
		return d.SyncTimeout
	}
	return DefaultSyncTimeout
}

// Timeout leaves the database work (Deps.JobTimeout) beyond the listing's own bound.
func (w *SyncWorker) Timeout(*river.Job[SyncArgs]) time.Duration { return w.deps.syncJobTimeout() }

func (w *SyncWorker) Work(ctx context.Context, job *river.Job[SyncArgs]) error {
	rep, err := SyncSource(ctx, w.deps.Pool, river.ClientFromContext[pgx.Tx](ctx), job.Args.SourceID, w.deps.syncTimeout(), w.deps.Commands)
	var gone *SourceNotFoundError
	var kind *NotMCPSourceError
	var refused *mcpclient.CommandNotAllowedError
	// Retrying cannot help these; a source whose command the allowlist refuses syncs again
	// once its command or the allowlist changes (PATCH queues a sync; so does its interval).
	if errors.As(err, &gone) || errors.As(err, &kind) || errors.As(err, &refused) {
		return river.JobCancel(err)
	}
	result := "ok"
	if err != nil {
		result = "failed"
	}
	w.deps.Metrics.ObserveSync(metrics.SyncResult{Source: rep.Source, Result: result,
		Added: rep.Result.Created, Updated: rep.Result.Updated, Removed: rep.Result.Deleted})
	return err
}

// SyncDueArgs enqueues a sync of every MCP source whose interval has elapsed since its
// last sync attempt. It runs periodically.
type SyncDueArgs struct{}

func (SyncDueArgs) Kind() string { return "sync_due_sources" }

func (SyncDueArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByPeriod: 10 * time.Second}}
}

// SyncDueWorker works SyncDueArgs.
type SyncDueWorker struct {
	river.WorkerDefaults[SyncDueArgs]
	deps Deps
}

func (w *SyncDueWorker) Work(ctx context.Context, _ *river.Job[SyncDueArgs]) error {
	n, err := AbandonSyncRuns(ctx, w.deps.Pool, w.deps.AbandonedAfter(SyncArgs{}.Kind()))
	if err != nil {
		return err
	}
	if n > 0 {
		w.deps.Logger.WarnContext(ctx, "sync runs abandoned by a stopped process marked failed", "runs", n)
	}
	ids, err := db.New(w.deps.Pool).SourcesDueForSync(ctx)
	if err != nil || len(ids) == 0 {
		return err
	}
	params := make([]river.InsertManyParams, len(ids))
	for i, id := range ids {
		params[i] = river.InsertManyParams{Args: SyncArgs{SourceID: id}}
	}
	_, err = river.ClientFromContext[pgx.Tx](ctx).InsertMany(ctx, params)
	return err
}

// AbandonSyncRuns marks failed the sync runs still 'running' more than after their start,
// which should be Deps.AbandonedAfter of sync_source (the job's timeout plus WindDown): a
// process that died mid-sync leaves them behind, and nothing else would end them. Every
// instance must use the same TOOLGATE_SYNC_TIMEOUT and TOOLGATE_JOB_TIMEOUT. It returns how
// many it marked.
func AbandonSyncRuns(ctx context.Context, pool *pgxpool.Pool, after time.Duration) (int64, error) {
	return db.New(pool).AbandonSyncRuns(ctx, after.Seconds())
}

// syncDueEvery is how often the periodic job looks for sources due for a sync. The
// smallest allowed source interval is 10s; 30s bounds the extra delay cheaply.
const syncDueEvery = 30 * time.Second

// SourceNotFoundError: the source to sync does not exist (any more).
type SourceNotFoundError struct{ ID int64 }

func (e *SourceNotFoundError) Error() string { return fmt.Sprintf("source %d not found", e.ID) }

// NotMCPSourceError: only MCP sources are synced; catalog sources are pushed.
type NotMCPSourceError struct {
	Source string
	Kind   string
}

func (e *NotMCPSourceError) Error() string {
	return fmt.Sprintf("source %q is of kind %s; only mcp_stdio and mcp_http sources sync from a server", e.Source, e.Kind)
}

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

// EnqueueSync queues a sync of the source; when one is already waiting or running, its id
// is returned with duplicate set.
func EnqueueSync(ctx context.Context, rc *river.Client[pgx.Tx], sourceID int64) (jobID int64, duplicate bool, err error) {
	res, err := rc.Insert(ctx, SyncArgs{SourceID: sourceID}, nil)
	if err != nil {
		return 0, false, err
	}
	return res.Job.ID, res.UniqueSkippedAsDuplicate, nil
}

// EnqueueSyncTx is EnqueueSync inside tx (the sync starts only if tx commits).
func EnqueueSyncTx(ctx context.Context, tx pgx.Tx, rc *river.Client[pgx.Tx], sourceID int64) (int64, error) {
	res, err := rc.InsertTx(ctx, tx, SyncArgs{SourceID: sourceID}, nil)
	if err != nil {
		return 0, err
	}
	return res.Job.ID, nil
}

// SyncSource runs one sync of an MCP source (ScaleMCP Algorithm 1): it lists the server's
// tools outside any transaction, within timeout, then applies the whole diff in one
// transaction together with the follow-up jobs of the changed tools. Every attempt is
// recorded as a sync run. An error leaves the source's tools as they were. An mcp_stdio
// source's stored command must still be one commands allows, or nothing is started and the
// run fails with a *mcpclient.CommandNotAllowedError.
func SyncSource(ctx context.Context, pool *pgxpool.Pool, rc *river.Client[pgx.Tx], sourceID int64, timeout time.Duration, commands mcpclient.CommandPolicy) (SyncReport, error) {
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
	if !mcpclient.IsMCPKind(src.Kind) {
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
		if ferr := q.FinishSyncRun(recCtx, db.FinishSyncRunParams{ID: rep.RunID, State: "failed", Skipped: skipped, Error: &msg}); ferr != nil {
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
		if err := enqueueChanged(ctx, tx, rc, res.Changed); err != nil {
			return err
		}
		rep.Result = res
		return db.New(tx).FinishSyncRun(ctx, db.FinishSyncRunParams{
			ID: rep.RunID, State: "succeeded", Created: int32(res.Created), Updated: int32(res.Updated),
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
