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

	"github.com/toolgate/toolgate/internal/profiles"
)

// ReweightArgs rebuilds one profile's vectors into SetID (profiles.Reweight). At most one
// job per profile is waiting or running (SetID is not part of the uniqueness).
type ReweightArgs struct {
	Profile string `json:"profile" river:"unique"`
	SetID   int64  `json:"set_id"`
}

// Kind is the River job kind.
func (ReweightArgs) Kind() string { return "reweight" }

// InsertOpts makes the job unique per profile until it finishes; a retried attempt resumes
// the same building set.
func (ReweightArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 5, UniqueOpts: uniqueUnfinished()}
}

// ReweightWorker works ReweightArgs.
type ReweightWorker struct {
	river.WorkerDefaults[ReweightArgs]
	deps Deps
}

// Timeout bounds one attempt (Deps.ReweightTimeout); a timed-out attempt is retried and
// resumes.
func (w *ReweightWorker) Timeout(*river.Job[ReweightArgs]) time.Duration {
	return w.deps.reweightTimeout()
}

// Work builds the set. A cancelled job, or the last failed attempt, marks the set failed
// and deletes its vectors; the profile's current set is untouched either way.
func (w *ReweightWorker) Work(ctx context.Context, job *river.Job[ReweightArgs]) error {
	err := profiles.Reweight(ctx, w.deps.Pool, job.Args.SetID, profiles.ReweightOptions{Logger: w.deps.Logger})
	if err == nil {
		return nil
	}
	cancelled := errors.Is(context.Cause(ctx), river.ErrJobCancelledRemotely)
	if cancelled || job.Attempt >= job.MaxAttempts {
		if ferr := profiles.FailReweight(context.WithoutCancel(ctx), w.deps.Pool, job.Args.SetID, err); ferr != nil {
			return errors.Join(err, ferr)
		}
	}
	if cancelled {
		return river.JobCancel(err)
	}
	return err
}

// ReweightTx queues the re-weight of profile into setID inside tx
// (profiles.ReweightQueue). When one is already queued or running, nothing is queued and
// that job is returned with the set it builds.
func (q Queue) ReweightTx(ctx context.Context, tx pgx.Tx, profile string, setID int64) (int64, int64, bool, error) {
	res, err := q.rc.InsertTx(ctx, tx, ReweightArgs{Profile: profile, SetID: setID}, nil)
	if err != nil {
		return 0, 0, false, err
	}
	if !res.UniqueSkippedAsDuplicate {
		return res.Job.ID, setID, false, nil
	}
	var args ReweightArgs
	if err := json.Unmarshal(res.Job.EncodedArgs, &args); err != nil {
		return 0, 0, false, err
	}
	return res.Job.ID, args.SetID, true, nil
}

// JobProgress is how far a re-weight job has come: its vector set's build.
type JobProgress = profiles.BuildProgress

// Progress returns the progress of a reweight job from its vector set; nil for other kinds.
func Progress(ctx context.Context, pool *pgxpool.Pool, job *rivertype.JobRow) (*JobProgress, error) {
	if job == nil || job.Kind != (ReweightArgs{}).Kind() {
		return nil, nil
	}
	var args ReweightArgs
	if err := json.Unmarshal(job.EncodedArgs, &args); err != nil {
		return nil, fmt.Errorf("reweight job %d args: %w", job.ID, err)
	}
	p, err := profiles.Progress(ctx, pool, args.SetID)
	if err != nil {
		return nil, err
	}
	return &p, nil
}
