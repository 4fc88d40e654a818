package jobs

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/wordvec"
)

// TestOlderLocalVectorsAreUpgraded: a catalog embedded by an older version of the built-in
// embedder is not refused by a newer one (as another model is): UpgradeLocalSpace, which
// `serve` runs before it checks the space, switches the space and queues every tool once;
// searches answer meanwhile (lexically), and the workers bring every vector back in the new
// version. Another embedder or dimension is left to EnsureSpace's refusal.
func TestOlderLocalVectorsAreUpgraded(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	tools := importDemo(t, pool, 4)
	deps := localDeps(pool)
	runUntilEnriched(t, pool, deps, len(tools))
	vectors := countRows(t, pool, `SELECT count(*) FROM tool_vectors`)
	current := deps.Embedder.Model()

	// the stored space as a catalog embedded by the previous version left it
	asStored := func(model string, dims int) {
		t.Helper()
		if _, err := pool.Exec(ctx, `UPDATE embedding_space SET model = $1, dims = $2`, model, dims); err != nil {
			t.Fatal(err)
		}
	}
	queue := NewQueue(insertClient(t, pool))
	var sm *embed.SpaceMismatchError
	for _, other := range []struct {
		model string
		dims  int
	}{{"text-embedding-3-small", 384}, {"local-hash-v1-128", 384}, {"local-hash-v9-384", 384}} {
		asStored(other.model, other.dims)
		if n, err := enrich.UpgradeLocalSpace(ctx, pool, queue, deps.Embedder); err != nil || n != 0 {
			t.Fatalf("stored %s: upgraded %d tools (%v), want none", other.model, n, err)
		}
		if err := embed.EnsureSpace(ctx, pool, deps.Embedder); !errors.As(err, &sm) {
			t.Fatalf("stored %s: want a refusal, got %v", other.model, err)
		}
	}

	asStored("local-hash-v1-384", 384)
	if _, err := pool.Exec(ctx, `UPDATE tool_components SET model = 'local-hash-v1-384' WHERE model IS NOT NULL`); err != nil {
		t.Fatal(err)
	}
	n, err := enrich.UpgradeLocalSpace(ctx, pool, queue, deps.Embedder)
	if err != nil || n != len(tools) {
		t.Fatalf("upgrade: %d tools queued (%v), want %d", n, err, len(tools))
	}
	if err := embed.EnsureSpace(ctx, pool, deps.Embedder); err != nil {
		t.Fatalf("after the upgrade the space is %v", err)
	}
	// a second process starting now finds nothing to do
	if n, err := enrich.UpgradeLocalSpace(ctx, pool, queue, deps.Embedder); err != nil || n != 0 {
		t.Fatalf("second upgrade: %d %v", n, err)
	}
	// before the workers run: no vector, and the search still finds the tool by its words
	if c := countRows(t, pool, `SELECT count(*) FROM tool_vectors`); c != 0 {
		t.Fatalf("%d old vectors left", c)
	}
	svc := search.New(pool, deps.Embedder, search.DefaultSettings(), slog.New(slog.DiscardHandler))
	resp, err := svc.Search(ctx, search.Internal(), search.Request{Query: "Apple current stock price", K: 3})
	if err != nil || len(resp.Results) == 0 || resp.Results[0].Name != "fin__get_apple_current_stock_price" {
		t.Fatalf("search during the upgrade: %+v %v", resp, err)
	}

	runUntilEnriched(t, pool, deps, len(tools))
	if c := countRows(t, pool, `SELECT count(*) FROM tool_vectors`); c != vectors {
		t.Fatalf("%d vectors after the upgrade, want %d as before", c, vectors)
	}
	if c := countRows(t, pool, `SELECT count(*) FROM tool_components WHERE model IS NOT NULL AND model <> $1`, current); c != 0 {
		t.Fatalf("%d components still of the old version", c)
	}
}

// TestFormerDefaultVectorsMoveToWordVectors: the built-in default was the hashing embedder
// of 384 dimensions; a catalog it embedded is remade at the first start of the default with
// word vectors (484 dimensions, the column re-typed), with no `reembed`, and the vector
// branch answers from the new vectors afterwards. A hashing space of a dimension someone
// chose is still refused.
func TestFormerDefaultVectorsMoveToWordVectors(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	tools := importDemo(t, pool, 3)
	runUntilEnriched(t, pool, localDeps(pool), len(tools))
	vectors := countRows(t, pool, `SELECT count(*) FROM tool_vectors`)

	words := localDeps(pool)
	words.Embedder = embed.NewLocalWords(embed.DefaultLocalDims, wordvec.MustBuiltin())
	queue := NewQueue(insertClient(t, pool))
	// four processes starting at once: one moves the space and queues every tool, once
	var (
		wg     sync.WaitGroup
		queued atomic.Int64
		errs   = make(chan error, 4)
	)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := enrich.UpgradeLocalSpace(ctx, pool, queue, words.Embedder)
			queued.Add(int64(n))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := queued.Load(); n != int64(len(tools)) {
		t.Fatalf("upgrade by four processes at once: %d tools queued, want %d", n, len(tools))
	}
	if err := embed.EnsureSpace(ctx, pool, words.Embedder); err != nil {
		t.Fatalf("after the upgrade the space is %v", err)
	}
	runUntilEnriched(t, pool, words, len(tools))
	if c := countRows(t, pool, `SELECT count(*) FROM tool_vectors WHERE vector_dims(embedding) = 484`); c != vectors {
		t.Fatalf("%d vectors of 484 dimensions after the upgrade, want %d as before", c, vectors)
	}
	svc := search.New(pool, words.Embedder, search.DefaultSettings(), slog.New(slog.DiscardHandler))
	resp, err := svc.Search(ctx, search.Internal(), search.Request{Query: "Apple current stock price", K: 3})
	if err != nil || len(resp.Results) == 0 || resp.Results[0].VectorRank == nil {
		t.Fatalf("search after the upgrade: %+v %v", resp, err)
	}

	if _, err := pool.Exec(ctx, `UPDATE embedding_space SET model = 'local-hash-v2-256', dims = 256`); err != nil {
		t.Fatal(err)
	}
	if n, err := enrich.UpgradeLocalSpace(ctx, pool, queue, words.Embedder); err != nil || n != 0 {
		t.Fatalf("stored local-hash-v2-256: upgraded %d tools (%v), want none", n, err)
	}
	var sm *embed.SpaceMismatchError
	if err := embed.EnsureSpace(ctx, pool, words.Embedder); !errors.As(err, &sm) {
		t.Fatalf("stored local-hash-v2-256: want a refusal, got %v", err)
	}
}
