package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/vectors"
)

// VectorIndexArgs builds the HNSW indexes that were deferred (vectors.BuildDeferredIndexes):
// those of the sets of the profiles that are not active, made while a new catalog was
// enriched. It runs right after the enrichment burst: while enrich_tool jobs are waiting or
// running it snoozes, since a build makes the enrichment writes to its set wait, and a set
// built before the burst ends would take the rest of the burst's vectors one by one.
type VectorIndexArgs struct{}

// Kind is the River job kind.
func (VectorIndexArgs) Kind() string { return "vector_index" }

// InsertOpts: one job waits or runs at a time; the enrich_tool jobs ask for it (see
// enqueueVectorIndex), the periodic one finds what a crash left.
func (VectorIndexArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 10, UniqueOpts: uniqueUnfinished()}
}

// vectorIndexSnooze is how long the job waits before looking again at an enrichment burst.
const vectorIndexSnooze = time.Second

// VectorIndexWorker works VectorIndexArgs.
type VectorIndexWorker struct {
	river.WorkerDefaults[VectorIndexArgs]
	deps Deps
}

// Timeout is a re-weight's: one attempt builds every deferred index, each as long as a
// re-weight's own build.
func (w *VectorIndexWorker) Timeout(*river.Job[VectorIndexArgs]) time.Duration {
	return w.deps.reweightTimeout()
}

// Work builds every deferred index once no enrichment is waiting or running. Each set's
// build commits on its own: a run cut short (a crash, the timeout) leaves the others to the
// retried attempt, and the sets left are complete and searched exactly meanwhile.
func (w *VectorIndexWorker) Work(ctx context.Context, _ *river.Job[VectorIndexArgs]) error {
	q := db.New(w.deps.Pool)
	deferred, err := q.HasDeferredVectorIndex(ctx)
	if err != nil || !deferred {
		return err
	}
	busy, err := enrichmentUnderway(ctx)
	if err != nil {
		return err
	}
	if busy {
		return river.JobSnooze(vectorIndexSnooze)
	}
	start := time.Now()
	n, err := vectors.BuildDeferredIndexes(ctx, w.deps.Pool)
	if n > 0 && w.deps.Logger != nil {
		w.deps.Logger.Info("deferred vector indexes built", "sets", n, "duration_ms", time.Since(start).Milliseconds())
	}
	return err
}

// enrichmentUnderway says whether an enrich_tool job is waiting to run or running, asking
// the River client working the job.
func enrichmentUnderway(ctx context.Context) (bool, error) {
	rc, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return false, err
	}
	res, err := rc.JobList(ctx, river.NewJobListParams().First(1).Queues(QueueEnrich).Kinds(EnrichToolArgs{}.Kind()).
		States(rivertype.JobStateAvailable, rivertype.JobStateRunning))
	if err != nil {
		return false, fmt.Errorf("list waiting enrichments: %w", err)
	}
	return len(res.Jobs) > 0, nil
}

// enqueueVectorIndex asks for a vector_index run after an enrichment committed into a
// deferred set. It looks at most once per second per process (the job is unique: while one
// waits, asking again inserts nothing), and never inside the enrichment's transaction.
func (d Deps) enqueueVectorIndex(ctx context.Context, rc *river.Client[pgx.Tx]) error {
	now := time.Now().Truncate(time.Second).UnixNano()
	if d.vectorIndexAsked != nil && d.vectorIndexAsked.Load() == now {
		return nil
	}
	if d.vectorIndexAsked != nil {
		d.vectorIndexAsked.Store(now)
	}
	deferred, err := db.New(d.Pool).HasDeferredVectorIndex(ctx)
	if err != nil || !deferred {
		return err
	}
	_, err = rc.Insert(ctx, VectorIndexArgs{}, nil)
	return err
}
