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
// themselves; enrichment queues this job instead, debounced: see enqueueLexicalIndex.
type LexicalIndexArgs struct{}

// Kind is the River job kind.
func (LexicalIndexArgs) Kind() string { return "lexical_index" }

// lexicalDebounce is the period of the debounced lexical_index job: at most one runs per
// period while enrichment goes on, at the end of the period in which it was asked for.
const lexicalDebounce = time.Second

// InsertOpts: unique per period of the job's scheduled time (enqueueLexicalIndex picks it).
func (LexicalIndexArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 25, UniqueOpts: river.UniqueOpts{ByPeriod: lexicalDebounce}}
}

// LexicalIndexWorker works LexicalIndexArgs.
type LexicalIndexWorker struct {
	river.WorkerDefaults[LexicalIndexArgs]
	deps Deps
}

// Timeout is the housekeeping jobs' (TOOLGATE_JOB_TIMEOUT): each batch of 2,000 tools
// commits on its own, so a flush cut short by it is resumed by the next run.
func (w *LexicalIndexWorker) Timeout(*river.Job[LexicalIndexArgs]) time.Duration {
	return w.deps.jobTimeout()
}

// Work indexes everything queued when it starts; what enrichment queues meanwhile asked for
// the run of its own period (enqueueLexicalIndex).
func (w *LexicalIndexWorker) Work(ctx context.Context, _ *river.Job[LexicalIndexArgs]) error {
	st, err := lexical.Flush(ctx, w.deps.Pool)
	if err == nil && st.Indexed > 0 && w.deps.Logger != nil {
		w.deps.Logger.Debug("lexical index flushed", "tools", st.Indexed, "reimpacted", st.Reimpacted, "vacuumed", st.Vacuumed)
	}
	return err
}

// lexicalRunAt is when the debounced lexical_index job asked for at now runs: just after the
// end of now's period.
func lexicalRunAt(now time.Time) time.Time {
	return now.Truncate(lexicalDebounce).Add(lexicalDebounce + 100*time.Millisecond)
}

// enqueueLexicalIndex asks for a lexical_index run after a committed write, debounced: the
// job is scheduled just after the end of the current period and is unique per period, so
// every caller within one period shares one run, which starts after all of them asked (a
// job of the period can only start once the period is over). The insert is skipped when
// this process already queued the job of the period (it would be a duplicate: one round
// trip saved per enrichment job). Call it after the write committed, never inside the
// write's transaction: the unique insert may wait for another caller's, and a writer must
// not wait while holding catalog locks.
func (d Deps) enqueueLexicalIndex(ctx context.Context, rc *river.Client[pgx.Tx]) error {
	period := lexicalRunAt(time.Now()).UnixNano()
	if d.lexicalAsked != nil && d.lexicalAsked.Load() == period {
		return nil
	}
	if _, err := rc.Insert(ctx, LexicalIndexArgs{}, &river.InsertOpts{ScheduledAt: time.Unix(0, period)}); err != nil {
		return err
	}
	if d.lexicalAsked != nil {
		d.lexicalAsked.Store(period)
	}
	return nil
}
