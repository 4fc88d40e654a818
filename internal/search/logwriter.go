package search

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/db"
)

// logWriter writes the retrieval-log rows of concurrent searches together (group commit):
// a search hands its row over and waits until the batch holding it committed. While one
// batch is being written, the rows of the searches that finish meanwhile queue; when it is
// done, they are the next batch. Nothing waits for a batch to fill: a search that finds no
// batch being written writes its row at once, so a lone search pays one round trip, as
// before, and under load one round trip and one commit serve many searches.
//
// A batch is one pgx batch (SearchLogAsync, then InsertSearchLogs of all its rows, one
// statement): one round trip, one implicit transaction that does not wait for a WAL flush, so a crash loses what
// synchronous_commit = off loses and nothing more. It commits or fails as a whole: every
// search of a failed batch fails (its answer is not given, so search_log still holds one
// row per answered search), and no search of another batch does.
//
// There is no goroutine of its own: the search that finds the writer idle writes the batch
// (its leader), then hands the next batch, if rows queued meanwhile, to the first of them.
// So every queued row has a search waiting to write it, and a server that stops once its
// requests have returned leaves no row behind.
type logWriter struct {
	pool    *pgxpool.Pool
	timeout time.Duration // bounds a batch's write; 0: none

	mu      sync.Mutex
	queue   []*pendingRow // the next batch
	writing bool          // a batch is being written (its leader will hand on the queue)
}

// pendingRow is one search's row on its way into a batch.
type pendingRow struct {
	params logRow
	id     int64
	err    error
	// done receives false when the row's batch was written (id and err are set), or true
	// when the row's search is to write the next batch, this row's.
	done chan bool
}

// logTimeout bounds a batch's write when the search statement has no timeout: a batch is
// written on behalf of several searches, so no one search's context may cancel it.
const logTimeout = 5 * time.Second

func newLogWriter(pool *pgxpool.Pool, timeout time.Duration) *logWriter {
	if timeout <= 0 {
		timeout = logTimeout
	}
	return &logWriter{pool: pool, timeout: timeout}
}

// write writes the row p with the rows of the searches that finish meanwhile and returns
// its id once its batch committed. ctx's values (traces) go with the batch this search
// writes; its cancellation does not, since the batch holds other searches' rows too.
func (w *logWriter) write(ctx context.Context, p logRow) (int64, error) {
	r := &pendingRow{params: p, done: make(chan bool, 1)}
	w.mu.Lock()
	w.queue = append(w.queue, r)
	lead := !w.writing
	w.writing = true
	w.mu.Unlock()
	if lead || <-r.done {
		w.writeBatch(ctx)
	}
	return r.id, r.err
}

// writeBatch writes the queued rows as one batch, tells their searches, and hands the rows
// queued meanwhile to the first of their searches (or marks the writer idle).
func (w *logWriter) writeBatch(ctx context.Context) {
	w.mu.Lock()
	batch := w.queue
	w.queue = nil
	w.mu.Unlock()

	ids, err := w.insert(ctx, batch)
	for i, r := range batch {
		if err != nil {
			r.err = err
		} else {
			r.id = ids[i]
		}
		r.done <- false // buffered: the leader's own row is never read
	}

	w.mu.Lock()
	next := w.queue
	w.writing = len(next) > 0
	w.mu.Unlock()
	if len(next) > 0 {
		next[0].done <- true
	}
}

// insert writes batch's rows in one statement, after SearchLogAsync in the same pgx batch,
// and returns their ids; it commits or fails as a whole.
func (w *logWriter) insert(ctx context.Context, batch []*pendingRow) ([]int64, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.timeout)
	defer cancel()
	rows := make([]logRow, len(batch))
	for i, r := range batch {
		rows[i] = r.params
	}
	data, err := json.Marshal(rows)
	if err != nil {
		return nil, err
	}
	qp := db.New(newPipeline(w.pool))
	if err := qp.SearchLogAsync(ctx); err != nil {
		return nil, err
	}
	ids, err := qp.InsertSearchLogs(ctx, data)
	if err != nil {
		return nil, err
	}
	if len(ids) != len(batch) {
		return nil, fmt.Errorf("search log: %d rows written of %d", len(ids), len(batch))
	}
	return ids, nil
}
