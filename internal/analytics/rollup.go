package analytics

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/db"
)

// Rollup defaults (docs/analytics.md#rollups).
const (
	// DefaultRollupHours is how many hours of the log one step (one transaction) rolls up:
	// a day, a few seconds of work at a million searches a month.
	DefaultRollupHours = 24
	// DefaultRollupLag is how long after an hour ends (and after a label is written) it is
	// rolled up: the transactions that logged its searches have committed by then.
	DefaultRollupLag = 2 * time.Minute
)

// RollupOptions tune Rollup; zero fields take the defaults.
type RollupOptions struct {
	MaxHours int
	Lag      time.Duration
	// Budget stops Rollup from starting another step once it ran this long (the next run
	// goes on from there); 0 runs until the rollups are caught up.
	Budget time.Duration
}

// RollupReport is what Rollup did.
type RollupReport struct {
	Steps           int
	HoursRolled     int       // whole hours of the log added to the rollups
	HoursRelabelled int       // rolled-up hours recomputed because their searches got labels
	Through         time.Time // the rollups hold every search created before this
	CaughtUp        bool      // nothing but the current hour (and the lag) is left to the log
}

// Rollup brings the rollups the analytics read up to date (toolgate_search_rollup_step in
// sql/functions/analytics.sql): it rolls up the whole hours of the log not rolled up yet,
// one step of at most MaxHours per transaction, recomputes the hours whose searches got
// labels, and rebuilds everything from the log when the definitions changed. Concurrent
// calls (several instances) take turns on search_rollup_state's row. The answers are
// exact without it; it only makes them read less of the log.
func Rollup(ctx context.Context, pool *pgxpool.Pool, opts RollupOptions) (RollupReport, error) {
	if opts.MaxHours <= 0 {
		opts.MaxHours = DefaultRollupHours
	}
	if opts.Lag <= 0 {
		opts.Lag = DefaultRollupLag
	}
	start := time.Now()
	var rep RollupReport
	q := db.New(pool)
	for {
		row, err := q.SearchRollupStep(ctx, db.SearchRollupStepParams{
			MaxHours: int32(opts.MaxHours),
			Lag:      pgtype.Interval{Microseconds: opts.Lag.Microseconds(), Valid: true},
		})
		if err != nil {
			return rep, fmt.Errorf("search rollup step: %w", err)
		}
		rep.Steps++
		rep.HoursRolled += int(row.HoursRolled)
		rep.HoursRelabelled += int(row.HoursRelabelled)
		rep.Through, rep.CaughtUp = row.RolledThrough.UTC(), row.CaughtUp
		if row.CaughtUp || (opts.Budget > 0 && time.Since(start) >= opts.Budget) {
			return rep, nil
		}
	}
}
