package jobs

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/internal/tune"
)

// TuneArgs tunes TDWA weights from labels (tune.Run): the tune's row holds what was asked.
type TuneArgs struct {
	TuneID int64 `json:"tune_id" river:"unique"`
}

// Kind is the River job kind.
func (TuneArgs) Kind() string { return "profile_tune" }

// InsertOpts: one job per tune. Every step before the last transaction only reads, so a
// retried attempt starts over and finishes the same way (the seed fixes the randomness).
func (TuneArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 3, UniqueOpts: uniqueUnfinished()}
}

// TuneWorker works TuneArgs.
type TuneWorker struct {
	river.WorkerDefaults[TuneArgs]
	deps Deps
}

// Timeout bounds one attempt like a re-weight's: both read every tool's components.
func (w *TuneWorker) Timeout(*river.Job[TuneArgs]) time.Duration { return w.deps.reweightTimeout() }

// Work runs the tune. A tune that cannot succeed (too few labels, its profile name taken
// meanwhile, its baseline deleted) fails at once without retries; any failure of the last
// attempt, or a cancellation, is recorded on the tune.
func (w *TuneWorker) Work(ctx context.Context, job *river.Job[TuneArgs]) error {
	_, err := tune.Run(ctx, w.deps.Pool, w.deps.Embedder, NewQueue(river.ClientFromContext[pgx.Tx](ctx)), job.Args.TuneID, tune.RunOptions{Search: w.deps.Search, Logger: w.deps.Logger})
	if err == nil {
		return nil
	}
	cancelled := errors.Is(context.Cause(ctx), river.ErrJobCancelledRemotely)
	permanent := tune.Permanent(err)
	if cancelled || permanent || job.Attempt >= job.MaxAttempts {
		if ferr := tune.Fail(context.WithoutCancel(ctx), w.deps.Pool, job.Args.TuneID, err); ferr != nil {
			return errors.Join(err, ferr)
		}
	}
	if cancelled || permanent {
		return river.JobCancel(err)
	}
	return err
}

// TuneTx queues, inside tx, the profile_tune job of tune id (tune.Queue).
func (q Queue) TuneTx(ctx context.Context, tx pgx.Tx, id int64) (int64, error) {
	res, err := q.rc.InsertTx(ctx, tx, TuneArgs{TuneID: id}, nil)
	if err != nil {
		return 0, err
	}
	return res.Job.ID, nil
}
