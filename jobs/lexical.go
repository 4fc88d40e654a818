package jobs

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/internal/lexical"
)

// LexicalIndexArgs drains the lexical index's queue (internal/lexical). Catalog writes that
// must be searchable when they return (import, PUT, sync, admin changes) flush the index
// themselves; enrichment queues this job instead, debounced: see EnqueueLexicalIndex.
type LexicalIndexArgs struct{}

// Kind is the River job kind.
func (LexicalIndexArgs) Kind() string { return "lexical_index" }

// lexicalDebounce is the period of the debounced lexical_index job: at most one runs per
// period while enrichment goes on, at the end of the period in which it was asked for.
const lexicalDebounce = time.Second

// InsertOpts: unique per period of the job's scheduled time (EnqueueLexicalIndex picks it).
func (LexicalIndexArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 25, UniqueOpts: river.UniqueOpts{ByPeriod: lexicalDebounce}}
}

// LexicalIndexWorker works LexicalIndexArgs.
type LexicalIndexWorker struct {
	river.WorkerDefaults[LexicalIndexArgs]
	deps Deps
}

// Timeout bounds one flush; the bulk load of 50,000 tools takes well under a minute.
func (w *LexicalIndexWorker) Timeout(*river.Job[LexicalIndexArgs]) time.Duration {
	return 10 * time.Minute
}

// Work indexes everything queued.
func (w *LexicalIndexWorker) Work(ctx context.Context, _ *river.Job[LexicalIndexArgs]) error {
	st, err := lexical.Flush(ctx, w.deps.Pool)
	if err == nil && st.Indexed > 0 && w.deps.Logger != nil {
		w.deps.Logger.Debug("lexical index flushed", "tools", st.Indexed, "reimpacted", st.Reimpacted, "vacuumed", st.Vacuumed)
	}
	return err
}

// EnqueueLexicalIndex asks for a lexical_index run after a committed write, debounced: the
// job is scheduled just after the end of the current period and is unique per period, so
// every caller within one period shares one run, which starts after all of them asked (a
// job of the period can only start once the period is over). Call it after the write
// committed, never inside the write's transaction: the unique insert may wait for another
// caller's insert, and a writer must not wait while holding catalog locks.
func EnqueueLexicalIndex(ctx context.Context, rc *river.Client[pgx.Tx]) error {
	at := time.Now().Truncate(lexicalDebounce).Add(lexicalDebounce + 100*time.Millisecond)
	_, err := rc.Insert(ctx, LexicalIndexArgs{}, &river.InsertOpts{ScheduledAt: at})
	return err
}
