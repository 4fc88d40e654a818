package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/rivertype"

	"github.com/toolgate/toolgate/internal/profiles"
	"github.com/toolgate/toolgate/internal/riverdb"
	"github.com/toolgate/toolgate/internal/sources"
)

// A job whose process died stays `running` until River's rescuer takes it back, once its
// attempt is older than the rescue threshold (timeouts.go). An operator need not wait that
// long: once the attempt is older than its own kind's timeout plus WindDown
// (Deps.AbandonedAfter), no live worker can still be on it, and RetryAbandoned and
// CancelAbandoned give it back at once. River's JobRetry leaves running jobs alone and its
// JobCancel only asks their worker to stop, which is gone; so these update River's row as
// its rescuer does, in a statement that rechecks the state and the attempt's age
// (internal/riverdb).

// RetryAbandoned makes job available to run now if it is still running with an attempt
// that began more than after ago, recording why the attempt ended among its errors (River's
// retry backoff counts them). Like River's JobRetry it grants one more attempt to a job
// that used its last. A sync's run left open by the dead process is closed (sources.AbandonSyncRuns).
// It reports whether it retried the job; a job in any other state, or attempted more
// recently, is left as it is.
func RetryAbandoned(ctx context.Context, pool *pgxpool.Pool, job *rivertype.JobRow, after time.Duration) (bool, error) {
	retried, err := riverdb.RetryRunning(ctx, pool, job.ID, after, "abandoned: the process working this attempt stopped; retried by an operator")
	if err != nil || !retried {
		return false, err
	}
	if job.Kind == (SyncArgs{}).Kind() {
		_, err = sources.AbandonSyncRuns(ctx, pool, after)
	}
	return true, err
}

// CancelAbandoned finalizes job as cancelled if it is still running with an attempt that
// began more than after ago, and does what its worker would have done on a cancellation: a
// re-weight's building set is failed and dropped (the profile keeps its current set), a
// sync's open run is closed. It reports whether it cancelled the job; an error after that
// (dropping the set's partition) leaves the job cancelled.
func CancelAbandoned(ctx context.Context, pool *pgxpool.Pool, job *rivertype.JobRow, after time.Duration) (bool, error) {
	cancelled, err := riverdb.CancelRunning(ctx, pool, job.ID, after, "abandoned: the process working this attempt stopped; cancelled by an operator")
	if err != nil || !cancelled {
		return false, err
	}
	switch job.Kind {
	case (SyncArgs{}).Kind():
		_, err = sources.AbandonSyncRuns(ctx, pool, after)
	case (ReweightArgs{}).Kind():
		var args ReweightArgs
		if err := json.Unmarshal(job.EncodedArgs, &args); err != nil {
			return true, fmt.Errorf("reweight job %d args: %w", job.ID, err)
		}
		// The job is cancelled now: its set is failed even if the caller goes away meanwhile.
		err = profiles.FailReweight(context.WithoutCancel(ctx), pool, args.SetID, errors.New("re-weight cancelled by an operator after its process stopped"))
	}
	return true, err
}
