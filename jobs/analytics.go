package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/internal/analytics"
)

// SearchRollupArgs brings the rollups of the search analytics up to date
// (analytics.Rollup): every rollupEvery, and at start.
type SearchRollupArgs struct{}

func (SearchRollupArgs) Kind() string { return "search_rollup" }

// InsertOpts collapses enqueues made while one is waiting or running into that one job.
func (SearchRollupArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: uniqueUnfinished()}
}

const (
	// rollupEvery is how often the rollups catch up: the labels of searches rolled up
	// earlier count in the hourly answers within this (plus the rollup's lag).
	rollupEvery = 5 * time.Minute
	// rollupBudget bounds the work of one run well inside the job timeout: a first run on a
	// big log (a rebuild after the definitions changed) goes on at the next run, each step
	// committed.
	rollupBudget = 30 * time.Second
)

// SearchRollupWorker works SearchRollupArgs.
type SearchRollupWorker struct {
	river.WorkerDefaults[SearchRollupArgs]
	deps Deps
}

func (w *SearchRollupWorker) Work(ctx context.Context, job *river.Job[SearchRollupArgs]) error {
	rep, err := analytics.Rollup(ctx, w.deps.Pool, analytics.RollupOptions{Budget: rollupBudget})
	if err != nil {
		return fmt.Errorf("search rollup: %w", err)
	}
	if rep.HoursRolled > 0 || rep.HoursRelabelled > 0 {
		w.deps.Logger.Info("search analytics rolled up", "hours", rep.HoursRolled, "relabelled_hours", rep.HoursRelabelled,
			"through", rep.Through, "caught_up", rep.CaughtUp)
	}
	return nil
}
