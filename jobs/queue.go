package jobs

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/internal/db"
)

// Queue inserts toolgate's jobs on behalf of the domain services. They live in internal/...
// (sources, enrich, profiles, tune, syncwatch) and cannot import this package, which imports
// them, so each declares the one or two methods it needs as a small interface and the
// process passes them a Queue. A write and the jobs that follow it up are inserted in the
// same transaction (the *Tx methods): the jobs exist if and only if the write commits.
type Queue struct{ rc *river.Client[pgx.Tx] }

// NewQueue makes a Queue that inserts with rc (a client that only inserts will do).
func NewQueue(rc *river.Client[pgx.Tx]) Queue { return Queue{rc: rc} }

// EnrichTx queues, inside tx, the enrichment of the given tools' current definitions (one
// enrich_tool job per tool and content hash).
func (q Queue) EnrichTx(ctx context.Context, tx pgx.Tx, toolIDs []int64) error {
	if len(toolIDs) == 0 {
		return nil
	}
	params, err := EnrichJobsFor(ctx, db.New(tx), toolIDs)
	if err != nil {
		return err
	}
	if _, err := q.rc.InsertManyTx(ctx, tx, params); err != nil {
		return fmt.Errorf("enqueue enrichment: %w", err)
	}
	return nil
}

// DeleteWaitingEnrichTx deletes, inside tx, the enrichment jobs of the named source's tools
// that have not started (DeleteWaitingEnrichJobs), for the source's deletion.
func (q Queue) DeleteWaitingEnrichTx(ctx context.Context, tx pgx.Tx, source string) (int64, error) {
	return DeleteWaitingEnrichJobs(ctx, tx, source)
}
