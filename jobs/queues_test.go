package jobs_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/mcptest"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/testfactory"
	"github.com/toolgate/toolgate/jobs"
)

// blockingEmbedder holds every Embed call until release is closed, counting the calls
// that started and telling the first cap(entered) of them on entered: the enrichment
// workers are all busy for as long as the test wants.
type blockingEmbedder struct {
	embed.Embedder
	release chan struct{}
	entered chan struct{}
	started atomic.Int64
}

func (b *blockingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	b.started.Add(1)
	select {
	case b.entered <- struct{}{}:
	default:
	}
	select {
	case <-b.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return b.Embedder.Embed(ctx, texts)
}

// A sync a user asks for runs while a catalog's enrichment is queued and every enrichment
// worker is busy: enrich_tool jobs have their own queue, so the sync's job is not behind
// them. With one queue, as before, the sync would wait for all 300 enrichments.
func TestSyncRunsAheadOfQueuedEnrichment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	const workers = 2
	emb := &blockingEmbedder{Embedder: embed.NewLocal(embed.DefaultLocalDims), release: make(chan struct{}), entered: make(chan struct{}, workers)}
	log := slog.New(slog.DiscardHandler)
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log, Embedder: emb, Enricher: enrich.Heuristic{}, Questions: 1, SyncTimeout: 10 * time.Second},
		jobs.Options{Work: true, MaxWorkers: workers})
	if err != nil {
		t.Fatal(err)
	}
	queue := jobs.NewQueue(rc)
	tools := make([]catalog.Tool, 300)
	for i := range tools {
		tools[i] = testfactory.Tool(fmt.Sprintf("tool_%03d", i), fmt.Sprintf("Does task %d.", i))
	}
	testfactory.Catalog(ctx, t, pool, "bulk", tools, &testfactory.CatalogOpts{Queue: queue})

	events := testfactory.JobEvents(t, rc)
	if err := rc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Stop(context.Background()) })
	defer close(emb.release) // before Stop: the blocked workers finish

	// Every enrichment worker is busy before the sync is asked for.
	for i := range workers {
		select {
		case <-emb.entered:
		case <-time.After(time.Minute):
			t.Fatalf("%d of %d enrichment workers started", i, workers)
		}
	}
	upstream := mcptest.NewHTTP(t, []catalog.Tool{mcpTool("ping", "Ping.", schemaQ)}, mcptest.Normal, 0)
	src := createSource(t, pool, "fresh", "mcp_http", upstream.Config(), false)
	if _, _, err := queue.Sync(ctx, src.ID); err != nil {
		t.Fatal(err)
	}
	var args jobs.SyncArgs
	ev := testfactory.WaitJob(t, events, 30*time.Second, "the sync", func(ev *river.Event) bool { return ev.Job.Kind == args.Kind() })
	if ev.Kind != river.EventKindJobCompleted {
		t.Fatalf("sync: %s, errors %v", ev.Kind, ev.Job.Errors)
	}
	// The enrichment is still where the sync found it: its workers all blocked, the rest
	// of its jobs waiting.
	if got := emb.started.Load(); got > workers {
		t.Fatalf("%d embeddings started with %d enrichment workers", got, workers)
	}
	var waiting int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'enrich_tool' AND state = 'available' AND queue = $1`,
		jobs.QueueEnrich).Scan(&waiting); err != nil {
		t.Fatal(err)
	}
	if waiting < len(tools)-2*workers {
		t.Fatalf("%d enrich_tool jobs still waiting, want most of %d", waiting, len(tools))
	}
	var synced int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM tools WHERE source_id = $1`, src.ID).Scan(&synced); err != nil {
		t.Fatal(err)
	}
	if synced != 1 {
		t.Fatalf("the synced source has %d tools, want 1", synced)
	}
}
