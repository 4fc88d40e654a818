package jobs

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/internal/observed"
)

// ObservedQueriesArgs refreshes the observed queries (internal/observed) of every tool
// labelled since the last run. It is a periodic sweep, not a job per label: labels are
// written by two paths (the MCP gateway's background writes and a trigger on
// search_feedback), neither in a transaction that should insert a unique job (River's
// unique insert locks the existing job, and a catalog transaction holding such locks
// deadlocked with River's completer, see EnrichToolArgs), and one sweep refreshes a burst
// of labels of one tool once.
type ObservedQueriesArgs struct{}

// Kind is the River job kind.
func (ObservedQueriesArgs) Kind() string { return "observed_queries" }

// InsertOpts: one sweep waits or runs at a time (it is inserted by the periodic job only,
// outside any transaction).
func (ObservedQueriesArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 5, UniqueOpts: uniqueUnfinished()}
}

// observedEvery is how often the sweep runs while collection is on.
const observedEvery = time.Minute

// ObservedQueriesWorker works ObservedQueriesArgs.
type ObservedQueriesWorker struct {
	river.WorkerDefaults[ObservedQueriesArgs]
	deps Deps
}

// Timeout is the enrichment's: a sweep embeds the new queries of the tools it refreshes.
func (w *ObservedQueriesWorker) Timeout(*river.Job[ObservedQueriesArgs]) time.Duration {
	return w.deps.enrichTimeout()
}

// Work sweeps; with TOOLGATE_OBSERVED_QUERIES 0 it does nothing.
func (w *ObservedQueriesWorker) Work(ctx context.Context, _ *river.Job[ObservedQueriesArgs]) error {
	_, err := w.deps.observedService().Sweep(ctx)
	return err
}

// observedService is the observed-queries service of the client's workers.
func (d Deps) observedService() *observed.Service {
	return &observed.Service{Pool: d.Pool, Enrich: d.enrichService(), Max: d.ObservedQueries, MinKeys: d.ObservedMinKeys, Logger: d.Logger}
}
