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

// APIKeyRateCleanupArgs deletes expired rate-limit windows from api_key_rate (keys) and
// oauth_subject_rate (OAuth subjects).
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
	q := db.New(w.deps.Pool)
	before := time.Now().Add(-rateKeep)
	keys, err := q.DeleteAPIKeyRateBefore(ctx, before)
	if err != nil {
		return fmt.Errorf("delete expired rate-limit windows: %w", err)
	}
	subjects, err := q.DeleteOAuthSubjectRateBefore(ctx, before)
	if err != nil {
		return fmt.Errorf("delete expired rate-limit windows of OAuth subjects: %w", err)
	}
	if n := keys + subjects; n > 0 {
		w.deps.Logger.Debug("rate-limit windows deleted", "rows", n)
	}
	return nil
}
