// Package riverdb is the one place where toolgate writes SQL against River's own table,
// river_job: each statement is a named function here, with its test beside it. Everything
// else goes through River's client API (Insert, JobGet, JobList, JobRetry, JobCancel),
// whose queries River keeps in step with its schema.
//
// Why raw SQL is needed here: River's client API has no way to count jobs, to rewrite a
// job's recorded errors, to take back a running job whose process died (JobRetry leaves a
// running job alone; JobCancel only asks its worker, which is gone, to stop), or to test
// "a job of this tool waits" inside a statement over toolgate's own tables. sqlc does not
// read River's migrations, so these statements are not in sql/queries either.
//
// Checked against the river_job schema of River v0.51.1 (github.com/riverqueue/river,
// go.mod), whose riverpgxv5 driver's main migration line ends at version 8: the columns
// id, kind, queue, state (the river_job_state enum), args, errors (jsonb[]), metadata,
// attempt, max_attempts, attempted_at, scheduled_at and finalized_at, and the check that a
// finalized state has a finalized_at. An upgrade of River that changes any of them must
// pass this package's tests, which run on River's own migrations.
//
// The package imports nothing of the project: internal/metrics reads its counts, and jobs,
// which imports internal/metrics, calls the rest.
package riverdb

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// DBTX is a pool, a connection or a transaction.
type DBTX interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// KindStateCount is the number of River jobs of one kind in one state.
type KindStateCount struct {
	Kind  string `json:"kind"`
	State string `json:"state"`
	Count int64  `json:"count"`
}

// CountJobs counts the jobs of the job table by kind and state, ordered by kind then
// state; given kinds, only the jobs of those kinds. It is one aggregate over river_job,
// which River's cleaner keeps to a day of finished jobs; River's JobList pages through
// rows and cannot count them.
func CountJobs(ctx context.Context, q DBTX, kinds ...string) ([]KindStateCount, error) {
	rows, err := q.Query(ctx, `
		SELECT kind, state::text, count(*) FROM river_job
		WHERE coalesce(cardinality($1::text[]), 0) = 0 OR kind = ANY ($1::text[])
		GROUP BY kind, state ORDER BY kind, state`, kinds)
	if err != nil {
		return nil, fmt.Errorf("count jobs: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[KindStateCount])
	if err != nil {
		return nil, fmt.Errorf("count jobs: %w", err)
	}
	return out, nil
}

// RetryRunning makes job id available to run now if it is still running with an attempt
// that began more than olderThan ago, as River's rescuer does with a job it takes back:
// reason is appended to its errors (River's retry backoff counts them) and, like River's
// JobRetry, a job that used its last attempt gets one more. It reports whether it retried
// the job; a job in any other state, or attempted more recently, is left as it is.
func RetryRunning(ctx context.Context, q DBTX, id int64, olderThan time.Duration, reason string) (bool, error) {
	tag, err := q.Exec(ctx, `
		UPDATE river_job
		SET state = 'available', scheduled_at = now(),
		    max_attempts = CASE WHEN attempt >= max_attempts THEN attempt + 1 ELSE max_attempts END,
		    metadata = metadata - 'cancel_attempted_at',
		    errors = array_append(errors, jsonb_build_object('at', now(), 'attempt', attempt, 'error', $3::text, 'trace', ''))
		WHERE id = $1 AND state = 'running' AND attempted_at < now() - make_interval(secs => $2)`,
		id, olderThan.Seconds(), reason)
	if err != nil {
		return false, fmt.Errorf("retry job %d: %w", id, err)
	}
	return tag.RowsAffected() == 1, nil
}

// CancelRunning finalizes job id as cancelled if it is still running with an attempt that
// began more than olderThan ago, with reason appended to its errors and the moment of the
// cancellation in its metadata, where River's JobCancel records it. It reports whether it
// cancelled the job; a job in any other state, or attempted more recently, is left as it
// is.
func CancelRunning(ctx context.Context, q DBTX, id int64, olderThan time.Duration, reason string) (bool, error) {
	tag, err := q.Exec(ctx, `
		UPDATE river_job
		SET state = 'cancelled', finalized_at = now(),
		    metadata = jsonb_set(metadata, '{cancel_attempted_at}', to_jsonb(now())),
		    errors = array_append(errors, jsonb_build_object('at', now(), 'attempt', attempt, 'error', $3::text, 'trace', ''))
		WHERE id = $1 AND state = 'running' AND attempted_at < now() - make_interval(secs => $2)`,
		id, olderThan.Seconds(), reason)
	if err != nil {
		return false, fmt.Errorf("cancel job %d: %w", id, err)
	}
	return tag.RowsAffected() == 1, nil
}

// JobErrors are the errors River recorded for one job, as the JSON array of its attempts'
// errors ({"at", "attempt", "error", "trace"}).
type JobErrors struct {
	ID     int64
	Errors string
}

// ListJobErrors returns the errors of every job that has some, by job id.
func ListJobErrors(ctx context.Context, q DBTX) ([]JobErrors, error) {
	rows, err := q.Query(ctx, `SELECT id, array_to_json(errors)::text FROM river_job WHERE cardinality(errors) > 0 ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list job errors: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[JobErrors])
	if err != nil {
		return nil, fmt.Errorf("list job errors: %w", err)
	}
	return out, nil
}

// ReplaceJobErrors sets the errors of job id to the JSON array errs if they are still old
// (as ListJobErrors returned them), and reports whether it did: a job whose errors changed
// meanwhile (River appended one) is left as it is.
func ReplaceJobErrors(ctx context.Context, q DBTX, id int64, old, errs string) (bool, error) {
	tag, err := q.Exec(ctx, `
		UPDATE river_job SET errors = ARRAY(SELECT jsonb_array_elements($2::jsonb))
		WHERE id = $1 AND array_to_json(errors)::jsonb = $3::jsonb`, id, errs, old)
	if err != nil {
		return false, fmt.Errorf("replace errors of job %d: %w", id, err)
	}
	return tag.RowsAffected() == 1, nil
}

// DeleteWaitingToolJobs deletes the jobs of kind that have not started (available,
// scheduled, retryable, pending) whose args name (tool_id) a tool of the source called
// source, and returns how many. One statement, so it deletes them all in the caller's
// transaction, waiting for a job another transaction holds; River's JobDeleteMany deletes
// at most 10,000 per call, skips locked jobs and filters args only through raw SQL too.
func DeleteWaitingToolJobs(ctx context.Context, q DBTX, kind, source string) (int64, error) {
	tag, err := q.Exec(ctx, `
		DELETE FROM river_job j
		USING tools t JOIN sources s ON s.id = t.source_id
		WHERE s.name = $1 AND j.kind = $2
		  AND j.state IN ('available', 'scheduled', 'retryable', 'pending')
		  AND (j.args ->> 'tool_id')::bigint = t.id`, source, kind)
	if err != nil {
		return 0, fmt.Errorf("delete waiting %s jobs of %s: %w", kind, source, err)
	}
	return tag.RowsAffected(), nil
}

// ToolsEnrichedOnlyBy returns, by id, the tools whose current definition has enrichment
// outputs of one of the models before and none of model, and no job of kind (whose args
// name the tool as tool_id) waiting or running: the tools an upgrade of the enricher to
// model has still to queue. The jobs are tested inside the statement: River's JobList
// would page through every unfinished job (tens of thousands during a catalog's first
// enrichment) to find the few of these tools.
func ToolsEnrichedOnlyBy(ctx context.Context, q DBTX, before []string, model, kind string) ([]int64, error) {
	rows, err := q.Query(ctx, `
		SELECT t.id FROM tools t
		WHERE EXISTS (SELECT 1 FROM tool_enrichments x
		              WHERE x.tool_id = t.id AND x.content_hash = t.content_hash AND x.model = ANY ($1::text[]))
		  AND NOT EXISTS (SELECT 1 FROM tool_enrichments x
		                  WHERE x.tool_id = t.id AND x.content_hash = t.content_hash AND x.model = $2)
		  AND NOT EXISTS (SELECT 1 FROM river_job j
		                  WHERE j.kind = $3 AND j.state IN ('available', 'scheduled', 'running', 'retryable', 'pending')
		                    AND (j.args ->> 'tool_id')::bigint = t.id)
		ORDER BY t.id`, before, model, kind)
	if err != nil {
		return nil, fmt.Errorf("tools enriched only by %v: %w", before, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("tools enriched only by %v: %w", before, err)
	}
	return ids, nil
}
