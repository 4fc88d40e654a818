package jobs

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/internal/upstreamauth"
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
		UniqueOpts:  uniqueUnfinished(),
	}
}

// SyncWorker works SyncArgs (sources.Sync). A failed sync returns its error, so River
// retries it with backoff; the source's tools are untouched by a failure.
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
	rep, err := sources.SyncWith(ctx, w.deps.Pool, NewQueue(river.ClientFromContext[pgx.Tx](ctx)), job.Args.SourceID,
		sources.SyncOptions{Timeout: w.deps.syncTimeout(), Commands: w.deps.Commands, Limits: w.deps.ListLimits, Auth: w.deps.Auth})
	var gone *sources.SourceNotFoundError
	var kind *sources.NotMCPSourceError
	var refused *mcpclient.CommandNotAllowedError
	var unauthorized *upstreamauth.NotAuthorizedError
	// Retrying cannot help these; a source whose command the allowlist refuses syncs again
	// once its command or the allowlist changes (PATCH queues a sync; so does its interval),
	// and a source without OAuth tokens once an admin authorizes it (which queues a sync).
	if errors.As(err, &gone) || errors.As(err, &kind) || errors.As(err, &refused) || errors.As(err, &unauthorized) {
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
	n, err := sources.AbandonSyncRuns(ctx, w.deps.Pool, w.deps.AbandonedAfter(SyncArgs{}.Kind()))
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

// syncDueEvery is how often the periodic job looks for sources due for a sync. The
// smallest allowed source interval is 10s; 30s bounds the extra delay cheaply.
const syncDueEvery = 30 * time.Second

// Sync queues a sync of the source; when one is already waiting or running, its id is
// returned with duplicate set.
func (q Queue) Sync(ctx context.Context, sourceID int64) (jobID int64, duplicate bool, err error) {
	res, err := q.rc.Insert(ctx, SyncArgs{SourceID: sourceID}, nil)
	if err != nil {
		return 0, false, err
	}
	return res.Job.ID, res.UniqueSkippedAsDuplicate, nil
}

// SyncTx is Sync inside tx (the sync starts only if tx commits).
func (q Queue) SyncTx(ctx context.Context, tx pgx.Tx, sourceID int64) (int64, error) {
	res, err := q.rc.InsertTx(ctx, tx, SyncArgs{SourceID: sourceID}, nil)
	if err != nil {
		return 0, err
	}
	return res.Job.ID, nil
}
