package jobs

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"
	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/internal/wordvec"
)

// runUntilEnriched runs a working River client until every enrich_tool job has completed.
func runUntilEnriched(t testing.TB, pool *pgxpool.Pool, deps Deps, want int) {
	t.Helper()
	runUntilEnrichedN(t, deps, want, 8)
}

// runUntilEnrichedN runs a working River client with workers workers until want
// enrich_tool jobs have completed.
func runUntilEnrichedN(t testing.TB, deps Deps, want, workers int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rc, err := NewClient(deps, Options{Work: true, MaxWorkers: workers})
	if err != nil {
		t.Fatal(err)
	}
	events, stop := rc.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	defer stop()
	if err := rc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Stop(context.Background()) }()
	done := 0
	for done < want {
		select {
		case ev := <-events:
			if ev.Job.Kind != (EnrichToolArgs{}).Kind() {
				continue
			}
			if ev.Kind == river.EventKindJobFailed {
				t.Fatalf("enrich_tool failed: %v", ev.Job.Errors)
			}
			done++
		case <-ctx.Done():
			t.Fatalf("%d of %d jobs done", done, want)
		}
	}
}

// importDemo imports the demo tools of the first companies of dataset.DemoCompanies as
// source fin, queueing their enrich_tool jobs, and returns them.
func importDemo(t *testing.T, pool *pgxpool.Pool, companies int) []catalog.Tool {
	t.Helper()
	tools := dataset.Tools(dataset.DemoCompanies[:companies])
	if _, _, err := sources.Import(context.Background(), pool, NewQueue(insertClient(t, pool)), "fin", tools); err != nil {
		t.Fatal(err)
	}
	return tools
}

func localDeps(pool *pgxpool.Pool) Deps {
	return Deps{Pool: pool, Logger: slog.New(slog.DiscardHandler), Embedder: embed.NewLocal(384), Enricher: enrich.Heuristic{}, Questions: 10}
}

func TestEnrichViaRiverAndReembed(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	tools := importDemo(t, pool, 4)
	runUntilEnriched(t, pool, localDeps(pool), len(tools))
	if n := countRows(t, pool, `SELECT count(*) FROM tool_vectors`); n != len(tools)*5 {
		t.Fatalf("%d tool vectors, want %d", n, len(tools)*5)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM tool_components WHERE kind = 'question'`); n != len(tools)*10 {
		t.Fatalf("%d questions, want %d", n, len(tools)*10)
	}
	// the spaced name component
	var name string
	if err := pool.QueryRow(ctx, `SELECT c.text FROM tool_components c JOIN tools t ON t.id = c.tool_id
		WHERE t.original_name = 'get_apple_current_stock_price' AND c.kind = 'name'`).Scan(&name); err != nil || name != "get apple current stock price" {
		t.Fatalf("name component %q %v", name, err)
	}
	// the query lands nearest to Apple's stock price tool in the default profile's set
	q := embed.NewLocal(384).Vector("stock price of Apple")
	var top string
	if err := pool.QueryRow(ctx, `SELECT t.original_name FROM tool_vectors v JOIN tools t ON t.id = v.tool_id
		JOIN weight_profiles p ON p.current_set = v.set_id AND p.name = 'default'
		ORDER BY v.embedding <=> $1 LIMIT 1`, pgvecOf(q)).Scan(&top); err != nil {
		t.Fatal(err)
	}
	if top != "get_apple_current_stock_price" {
		t.Fatalf("nearest tool %s", top)
	}

	// a different embedder is refused, until reembed switches the space
	other := embed.NewLocal(128)
	var sm *embed.SpaceMismatchError
	if err := embed.EnsureSpace(ctx, pool, other); !errors.As(err, &sm) || sm.StoredDims != 384 {
		t.Fatalf("want SpaceMismatchError, got %v", err)
	}
	n, err := enrich.Reembed(ctx, pool, NewQueue(insertClient(t, pool)), other)
	if err != nil || n != len(tools) {
		t.Fatalf("reembed: %d %v", n, err)
	}
	if c := countRows(t, pool, `SELECT count(*) FROM tool_vectors`); c != 0 {
		t.Fatalf("%d vectors left after reembed", c)
	}
	if err := embed.EnsureSpace(ctx, pool, other); err != nil {
		t.Fatal(err)
	}
	// a worker still configured with the old embedder writes nothing
	var anyID int64
	var anyHash string
	if err := pool.QueryRow(ctx, `SELECT id, content_hash FROM tools LIMIT 1`).Scan(&anyID, &anyHash); err != nil {
		t.Fatal(err)
	}
	if _, err := localDeps(pool).enrichService().EnrichTool(ctx, anyID, anyHash); !errors.As(err, &sm) {
		t.Fatalf("old embedder after reembed: want SpaceMismatchError, got %v", err)
	}
	deps := localDeps(pool)
	deps.Embedder = other
	runUntilEnriched(t, pool, deps, len(tools))
	if c := countRows(t, pool, `SELECT count(*) FROM tool_vectors WHERE vector_dims(embedding) = 128`); c != len(tools)*5 {
		t.Fatalf("%d 128-dim vectors", c)
	}
	// one HNSW index per ready set's partition (the five built-in profiles)
	if c := countRows(t, pool, `SELECT count(*) FROM pg_indexes WHERE indexname LIKE 'tool\_vectors\_s%\_hnsw'
		AND indexdef LIKE '%vector_cosine_ops%'`); c != 5 {
		t.Fatalf("%d HNSW indexes after reembed, want 5", c)
	}
	if c := countRows(t, pool, `SELECT count(*) FROM tool_components WHERE model IS DISTINCT FROM 'local-hash-v2-128'`); c != 0 {
		t.Fatalf("%d components not re-embedded", c)
	}
}

func pgvecOf(v []float32) pgvector.Vector { return pgvector.NewVector(v) }

// Enrichment through River brings the enriched fields into the lexical index without
// anyone flushing it: each job asks for the debounced lexical_index run, which drains the
// queue about a second later.
func TestEnrichedFieldsReachTheLexicalIndex(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	tools := importDemo(t, pool, 2)
	// searchable by name and description at once, nothing of the questions yet
	if n := countRows(t, pool, `SELECT count(*) FROM search_docs`); n != len(tools) {
		t.Fatalf("%d tools indexed after the import, want %d", n, len(tools))
	}
	before := countRows(t, pool, `SELECT count(*) FROM search_lexemes`)

	rc, err := NewClient(localDeps(pool), Options{Work: true, MaxWorkers: 4})
	if err != nil {
		t.Fatal(err)
	}
	events, stop := rc.Subscribe(river.EventKindJobCompleted)
	defer stop()
	if err := rc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Stop(context.Background()) }()
	// Wait for a lexical_index run after which every enrichment is indexed (queue empty).
	// Well under the periodic run's minute: only the debounced runs can do it in time.
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.Job.Kind != (LexicalIndexArgs{}).Kind() {
				continue
			}
		case <-deadline:
			t.Fatalf("queue %d, enriched %d", countRows(t, pool, `SELECT count(*) FROM search_queue`),
				countRows(t, pool, `SELECT count(*) FROM tool_components WHERE kind = 'question'`))
		}
		if countRows(t, pool, `SELECT count(*) FROM tool_enrichments`) == len(tools)*3 &&
			countRows(t, pool, `SELECT count(*) FROM search_queue`) == 0 {
			break
		}
	}
	if after := countRows(t, pool, `SELECT count(*) FROM search_lexemes`); after <= before {
		t.Fatalf("lexemes %d before the enrichment, %d after: the enriched fields were not indexed", before, after)
	}
	// every question's words are in its tool's document
	if n := countRows(t, pool, `SELECT count(*) FROM tool_components c JOIN search_docs d ON d.tool_id = c.tool_id,
		unnest(tsvector_to_array(to_tsvector('english', c.text))) l
		WHERE c.kind = 'question' AND NOT l = ANY (d.lexemes)`); n != 0 {
		t.Fatalf("%d question words missing from the documents", n)
	}
}

// TestReembedWithWordVectors: the built-in embedder with word vectors is a space of its own,
// reached by reembed from the hashed one; every component and tool vector is remade with it.
func TestReembedWithWordVectors(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	tools := importDemo(t, pool, 2)
	runUntilEnriched(t, pool, localDeps(pool), len(tools))
	words := embed.NewLocalWords(384, wordvec.MustBuiltin())
	var sm *embed.SpaceMismatchError
	if err := embed.EnsureSpace(ctx, pool, words); !errors.As(err, &sm) || sm.StoredDims != 384 {
		t.Fatalf("want SpaceMismatchError, got %v", err)
	}
	if n, err := enrich.Reembed(ctx, pool, NewQueue(insertClient(t, pool)), words); err != nil || n != len(tools) {
		t.Fatalf("reembed: %d %v", n, err)
	}
	deps := localDeps(pool)
	deps.Embedder = words
	runUntilEnriched(t, pool, deps, len(tools))
	if c := countRows(t, pool, `SELECT count(*) FROM tool_vectors WHERE vector_dims(embedding) = 484`); c != len(tools)*5 {
		t.Fatalf("%d 484-dim vectors, want %d", c, len(tools)*5)
	}
	if c := countRows(t, pool, `SELECT count(*) FROM tool_components WHERE model IS DISTINCT FROM 'local-words-v1-484'`); c != 0 {
		t.Fatalf("%d components not re-embedded", c)
	}
}
