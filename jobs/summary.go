package jobs

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// KindStateCount is the number of River jobs of one kind in one state.
type KindStateCount struct {
	Kind  string `json:"kind"`
	State string `json:"state"`
	Count int64  `json:"count"`
}

// Summary counts the jobs of the job table by kind and state, ordered by kind then state:
// one aggregate over river_job, which River's cleaner keeps to a day of finished jobs.
// River's own job list pages through rows and cannot count them.
func Summary(ctx context.Context, pool *pgxpool.Pool) ([]KindStateCount, error) {
	// Raw SQL: river_job belongs to River's own migrations, which sqlc does not read.
	rows, err := pool.Query(ctx, `SELECT kind, state::text, count(*) FROM river_job GROUP BY kind, state ORDER BY kind, state`)
	if err != nil {
		return nil, fmt.Errorf("count jobs: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[KindStateCount])
	if err != nil {
		return nil, fmt.Errorf("count jobs: %w", err)
	}
	return out, nil
}
