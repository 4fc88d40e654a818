package jobs

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/riverdb"
)

// EnrichToolArgs enriches and embeds one tool definition (enrich.Service.EnrichTool): the
// Tool-DE profile, the synthetic questions and the key topics, the embedding of every
// changed component, the tool's vector in every writable vector set.
type EnrichToolArgs struct {
	ToolID      int64  `json:"tool_id"`
	ContentHash string `json:"content_hash"`
}

func (EnrichToolArgs) Kind() string { return "enrich_tool" }

// InsertOpts: enrich_tool jobs are not unique. Catalog writes queue them only for tools
// whose definition changed, so duplicates are rare (a definition that comes back while its
// earlier job still waits, `toolgate reembed`), and a duplicate finds its work done and
// makes no provider call. A unique job would be worse: River inserts a batch of unique jobs
// with ON CONFLICT DO UPDATE, locking every existing job of the same key, and a catalog
// transaction holding those locks while River's completer, holding others, updates the
// same jobs deadlocked (40P01 in TestConcurrentWritersNeverDeadlock).
//
// They go to their own queue, QueueEnrich: a catalog of thousands of tools queues thousands
// of them at once, and a sync, re-weight or tune a user asks for meanwhile must not wait
// behind them. The default queue, with its own workers, runs everything else.
func (EnrichToolArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 10, Queue: QueueEnrich}
}

// QueueEnrich is the River queue of enrich_tool jobs, the bulk work of a catalog write.
const QueueEnrich = "enrich"

// EnrichToolWorker works EnrichToolArgs.
type EnrichToolWorker struct {
	river.WorkerDefaults[EnrichToolArgs]
	deps Deps
}

// DefaultEnrichTimeout bounds one tool's provider calls and writes (TOOLGATE_ENRICH_TIMEOUT).
const DefaultEnrichTimeout = 5 * time.Minute

// Timeout bounds one tool's provider calls and writes.
func (w *EnrichToolWorker) Timeout(*river.Job[EnrichToolArgs]) time.Duration {
	return w.deps.enrichTimeout()
}

// Work makes no provider call for an unchanged tool whose outputs and embeddings exist.
// The tool's enriched fields reach the lexical index with the next debounced lexical_index
// run, a moment later (at once when the worker runs outside a River client); a vector set
// whose index was deferred gets it from the vector_index job it asks for, after the burst.
//
// A step whose output is malformed beyond repair is recorded as failed on the tool
// (enrich.Report.Failed), which is stored with the components it has: the job completes,
// since running it again would give the same failure.
func (w *EnrichToolWorker) Work(ctx context.Context, job *river.Job[EnrichToolArgs]) error {
	rep, err := w.deps.enrichService().EnrichTool(ctx, job.Args.ToolID, job.Args.ContentHash)
	if err != nil || rep.Skipped != "" {
		return err
	}
	if err := w.indexLexical(ctx); err != nil {
		return err
	}
	if rc, err := river.ClientFromContextSafely[pgx.Tx](ctx); err == nil && rep.Vectors > 0 {
		return w.deps.enqueueVectorIndex(ctx, rc)
	}
	return nil
}

// indexLexical brings the tool's enriched fields to the lexical index: a debounced
// lexical_index job, or at once outside a River client.
func (w *EnrichToolWorker) indexLexical(ctx context.Context) error {
	rc, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		_, err = lexical.Flush(ctx, w.deps.Pool)
		return err
	}
	return w.deps.enqueueLexicalIndex(ctx, rc)
}

// enrichService is the enrichment service of the client's workers; a worker made without
// NewClient (a test) gets one of its own.
func (d Deps) enrichService() *enrich.Service {
	if d.enrich != nil {
		return d.enrich
	}
	return &enrich.Service{Pool: d.Pool, Embedder: d.Embedder, Enricher: d.Enricher, Questions: d.Questions, Logger: d.Logger}
}

// DeleteWaitingEnrichJobs deletes, in tx, the enrich_tool jobs of the tools of the source
// called name that have not started (available, scheduled, retryable, pending), and returns
// how many. The source's deletion calls it in its own transaction, before the tools go: a
// deleted source's jobs would find nothing to do, yet tens of thousands of them would
// still hold up every other source's enrichment behind them. A running job is left to
// finish; it finds its tool gone.
func DeleteWaitingEnrichJobs(ctx context.Context, tx pgx.Tx, name string) (int64, error) {
	return riverdb.DeleteWaitingToolJobs(ctx, tx, EnrichToolArgs{}.Kind(), name)
}

// EnrichJobsFor builds the enrich_tool jobs for the given tools' current definitions.
func EnrichJobsFor(ctx context.Context, q *db.Queries, toolIDs []int64) ([]river.InsertManyParams, error) {
	rows, err := q.ListToolHashesByID(ctx, toolIDs)
	if err != nil {
		return nil, err
	}
	params := make([]river.InsertManyParams, len(rows))
	for i, r := range rows {
		params[i] = river.InsertManyParams{Args: EnrichToolArgs{ToolID: r.ID, ContentHash: r.ContentHash}}
	}
	return params, nil
}
