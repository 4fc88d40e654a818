package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/internal/db"
)

// rateKeep is how long finished rate-limit windows (one minute each) are kept: only the
// current window is ever read, the margin covers clock skew between instances.
const rateKeep = 5 * time.Minute

// APIKeyRateCleanupArgs deletes expired per-key rate-limit windows from api_key_rate.
type APIKeyRateCleanupArgs struct{}

func (APIKeyRateCleanupArgs) Kind() string { return "api_key_rate_cleanup" }

// InsertOpts collapses enqueues made while one is waiting or running.
func (APIKeyRateCleanupArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: uniqueUnfinished()}
}

// APIKeyRateCleanupWorker works APIKeyRateCleanupArgs.
type APIKeyRateCleanupWorker struct {
	river.WorkerDefaults[APIKeyRateCleanupArgs]
	deps Deps
}

func (w *APIKeyRateCleanupWorker) Work(ctx context.Context, job *river.Job[APIKeyRateCleanupArgs]) error {
	n, err := db.New(w.deps.Pool).DeleteAPIKeyRateBefore(ctx, time.Now().Add(-rateKeep))
	if err != nil {
		return fmt.Errorf("delete expired rate-limit windows: %w", err)
	}
	if n > 0 {
		w.deps.Logger.Debug("rate-limit windows deleted", "rows", n)
	}
	return nil
}
