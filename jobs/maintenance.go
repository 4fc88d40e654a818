package jobs

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/internal/db"
)

// SearchLogMaintenanceArgs keeps the monthly partitions of the retrieval log: it creates
// the current and the next two months' partitions and drops those older than the
// retention period.
type SearchLogMaintenanceArgs struct{}

func (SearchLogMaintenanceArgs) Kind() string { return "search_log_maintenance" }

// InsertOpts makes enqueues made while one is waiting or running (several instances
// starting at once) collapse into that one job.
func (SearchLogMaintenanceArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: uniqueUnfinished()}
}

// SearchLogMaintenanceWorker works SearchLogMaintenanceArgs.
type SearchLogMaintenanceWorker struct {
	river.WorkerDefaults[SearchLogMaintenanceArgs]
	deps Deps
}

func (w *SearchLogMaintenanceWorker) Work(ctx context.Context, job *river.Job[SearchLogMaintenanceArgs]) error {
	q := db.New(w.deps.Pool)
	made, err := q.EnsureSearchLogPartitions(ctx, 2)
	if err != nil {
		return fmt.Errorf("create search_log partitions: %w", err)
	}
	dropped, err := q.DropSearchLogPartitions(ctx, pgtype.Interval{Microseconds: w.deps.SearchLogKeep.Microseconds(), Valid: true})
	if err != nil {
		return fmt.Errorf("drop old search_log partitions: %w", err)
	}
	if made > 0 || dropped > 0 {
		w.deps.Logger.Info("search log partitions maintained", "created", made, "dropped", dropped)
	}
	return nil
}
