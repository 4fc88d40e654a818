package jobs

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/internal/memory"
)

// MemorySweepArgs refreshes the memories (internal/memory) of every tool labelled since the
// last run. A periodic sweep, not a job per label, for the reasons of ObservedQueriesArgs.
type MemorySweepArgs struct{}

// Kind is the River job kind.
func (MemorySweepArgs) Kind() string { return "memory_sweep" }

// InsertOpts: one sweep waits or runs at a time.
func (MemorySweepArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 5, UniqueOpts: uniqueUnfinished()}
}

// memoryEvery is how often the sweep runs while the memory branch is on: a tenant's
// labelled search teaches its next searches within about this long.
const memoryEvery = 15 * time.Second

// MemorySweepWorker works MemorySweepArgs.
type MemorySweepWorker struct {
	river.WorkerDefaults[MemorySweepArgs]
	deps Deps
}

// Timeout is the enrichment's: a sweep embeds the new queries of the tools it refreshes.
func (w *MemorySweepWorker) Timeout(*river.Job[MemorySweepArgs]) time.Duration {
	return w.deps.enrichTimeout()
}

// Work sweeps.
func (w *MemorySweepWorker) Work(ctx context.Context, _ *river.Job[MemorySweepArgs]) error {
	_, err := w.deps.memoryService().Sweep(ctx)
	return err
}

// memoryService is the memory service of the client's workers: memories embedded as the
// search embeds a query (Search.QueryIDF), the k-anonymity threshold the observed queries'.
func (d Deps) memoryService() *memory.Service {
	return &memory.Service{Pool: d.Pool, Embedder: d.Embedder, QueryIDF: d.Search.QueryIDF, Demotions: d.Search.WeightDemotion > 0,
		MaxPerTool: d.MemoryPerTool, MinKeys: d.ObservedMinKeys, ListFrom: d.MemoryListsFrom, Logger: d.Logger}
}
