package search

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/toolgate/toolgate/internal/db"
)

// batcher is what a pipeline sends its statements through: a pool (each batch is then one
// implicit transaction: PostgreSQL runs the statements up to the batch's single Sync message
// as one transaction) or a transaction.
type batcher interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// pipeline is a db.DBTX that holds back the statements run with Exec and sends them in one
// batch, one round trip, with the next Query. The search runs its per-transaction settings
// (SearchSetConfig, set_config(..., true)) and the search statement this way: both reach
// the server together and share the implicit transaction of the batch, so the settings
// apply to the statement and end with it, as a pooler in transaction mode requires.
type pipeline struct {
	to      batcher
	pending *pgx.Batch
}

func newPipeline(to batcher) *pipeline { return &pipeline{to: to, pending: &pgx.Batch{}} }

// Exec queues the statement for the next Query; its errors are reported by that Query. Its
// command tag is not known yet, so only a statement whose caller never reads it may be
// queued: a sqlc :exec query (SearchSetConfig, SearchLogAsync). Anything else (an :execrows
// or :execresult query, whose caller would read a zero count, or SQL of another origin) is
// refused with an error rather than answered with a made-up tag.
func (p *pipeline) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if !isExecQuery(sql) {
		return pgconn.CommandTag{}, fmt.Errorf("search pipeline: cannot queue %q: only sqlc :exec queries, whose command tag is never read", firstLine(sql))
	}
	p.pending.Queue(sql, args...)
	return pgconn.CommandTag{}, nil
}

// isExecQuery reports whether sql is the text of a sqlc :exec query, which starts with
// sqlc's "-- name: Name :exec" line.
func isExecQuery(sql string) bool {
	name, ok := strings.CutPrefix(firstLine(sql), "-- name: ")
	return ok && strings.HasSuffix(name, " :exec")
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}

// Query sends the queued statements and this one as one batch and returns this one's rows.
func (p *pipeline) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	b := p.pending
	p.pending = &pgx.Batch{}
	queued := b.Len()
	b.Queue(sql, args...)
	br := p.to.SendBatch(ctx, b)
	for range queued {
		if _, err := br.Exec(); err != nil {
			return nil, errors.Join(err, br.Close())
		}
	}
	rows, err := br.Query()
	if err != nil {
		return nil, errors.Join(err, br.Close())
	}
	return &batchRows{Rows: rows, br: br}, nil
}

// QueryRow is Query for one row.
func (p *pipeline) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	rows, err := p.Query(ctx, sql, args...)
	return oneRow{rows: rows, err: err}
}

// SendBatch sends the queued statements and b as one batch and returns b's results: the
// queued statements' results are read first, and an error of one of them is every result's.
func (p *pipeline) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	all := p.pending
	p.pending = &pgx.Batch{}
	queued := all.Len()
	all.QueuedQueries = append(all.QueuedQueries, b.QueuedQueries...)
	br := p.to.SendBatch(ctx, all)
	for range queued {
		if _, err := br.Exec(); err != nil {
			return failedBatch{BatchResults: br, err: errors.Join(err, br.Close())}
		}
	}
	return br
}

// failedBatch is the results of a batch, closed, whose queued statements failed: err, for
// each.
type failedBatch struct {
	pgx.BatchResults
	err error
}

func (f failedBatch) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, f.err }
func (f failedBatch) Query() (pgx.Rows, error)         { return nil, f.err }
func (f failedBatch) QueryRow() pgx.Row                { return oneRow{err: f.err} }
func (f failedBatch) Close() error                     { return f.err }

var _ db.DBTX = (*pipeline)(nil)

// batchRows are the rows of a batch's last statement; closing them closes the batch, which
// ends its implicit transaction (and reports a failed commit).
type batchRows struct {
	pgx.Rows
	br     pgx.BatchResults
	closed bool
	err    error
}

// Next closes the batch after the last row, so that Err, which the caller reads before it
// closes the rows, reports an error of the rest of the batch too.
func (r *batchRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.Close()
	return false
}

func (r *batchRows) Close() {
	if r.closed {
		return
	}
	r.closed = true
	r.Rows.Close()
	r.err = r.br.Close()
}

func (r *batchRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.err
}

// oneRow is the first row of rows (pgx.Row semantics: pgx.ErrNoRows when there is none).
type oneRow struct {
	rows pgx.Rows
	err  error
}

func (r oneRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}
