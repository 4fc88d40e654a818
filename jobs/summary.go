package jobs

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/riverdb"
)

// Summary counts the jobs of the job table by kind and state, ordered by kind then state
// (riverdb.CountJobs): River's own job list pages through rows and cannot count them.
func Summary(ctx context.Context, pool *pgxpool.Pool) ([]riverdb.KindStateCount, error) {
	return riverdb.CountJobs(ctx, pool)
}
