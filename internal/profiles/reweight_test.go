package profiles_test

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/profiles"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// enrichedCatalog imports the demo tools of n companies and enriches them with svc. It
// returns the number of tools.
func enrichedCatalog(t *testing.T, pool *pgxpool.Pool, svc *enrich.Service, n int) int {
	t.Helper()
	ids := testfactory.DemoCatalog(context.Background(), t, pool, n, nil)
	testfactory.Enrich(context.Background(), t, svc, ids...)
	return len(ids)
}

func countRows(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func pgvecOf(v []float32) pgvector.Vector { return pgvector.NewVector(v) }

func TestReweightConcurrentReadersSeeOneWholeSet(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	n := enrichedCatalog(t, pool, testfactory.LocalEnricher(pool, 10), 2)
	query := pgvecOf(embed.NewLocal(384).Vector("quarterly revenue of the company"))

	// fingerprint: the count and the sum of the first coordinate over the current set, read
	// in one statement as a search would.
	const read = `SELECT count(*), coalesce(sum((v.embedding::real[])[1]), 0)
		FROM tool_vectors v JOIN weight_profiles p ON p.current_set = v.set_id WHERE p.name = 'default'`
	fingerprint := func() (int, float64) {
		var c int
		var s float64
		if err := pool.QueryRow(ctx, read).Scan(&c, &s); err != nil {
			t.Fatal(err)
		}
		return c, s
	}
	_, oldSum := fingerprint()

	testfactory.Weights(context.Background(), t, pool, "default", map[string]float64{"name": 1, "question": 0.2})
	set := testfactory.BeginReweight(context.Background(), t, pool, "default")
	const readers = 4
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var reads atomic.Int64
	var newSum atomic.Value
	bad := make(chan string, 8)
	// each reader tells, once, that a read it began after the re-weight returned (the
	// switched state) passed the checks
	var switched atomic.Bool
	readAfter := make(chan struct{}, readers)
	for range readers {
		wg.Go(func() {
			told := false
			for {
				select {
				case <-stop:
					return
				default:
				}
				after := switched.Load()
				var c int
				var s float64
				if err := pool.QueryRow(ctx, read).Scan(&c, &s); err != nil {
					bad <- "read: " + err.Error()
					return
				}
				var knn int
				if err := pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT v.tool_id FROM tool_vectors v
					JOIN weight_profiles p ON p.current_set = v.set_id WHERE p.name = 'default'
					ORDER BY v.embedding <=> $1 LIMIT 5) k`, query).Scan(&knn); err != nil {
					bad <- "knn: " + err.Error()
					return
				}
				ns, _ := newSum.Load().(float64)
				if c != n || knn != 5 || (math.Abs(s-oldSum) > 1e-3 && (ns == 0 || math.Abs(s-ns) > 1e-3)) {
					bad <- "mixed or partial set seen"
					return
				}
				reads.Add(1)
				if after && !told {
					told = true
					readAfter <- struct{}{}
				}
			}
		})
	}
	// the new set's fingerprint is known once it is complete, just before the switch
	err := profiles.Reweight(ctx, pool, set.ID, profiles.ReweightOptions{BatchSize: 7, OnProgress: func(done, total int) {
		if done == total {
			var s float64
			if err := pool.QueryRow(ctx, `SELECT sum((embedding::real[])[1]) FROM tool_vectors WHERE set_id = $1`, set.ID).Scan(&s); err == nil {
				newSum.Store(s)
			}
		}
	}})
	// every reader observes the switched state too, unless one has already failed
	switched.Store(true)
waitReaders:
	for range readers {
		select {
		case <-readAfter:
		case msg := <-bad:
			t.Error(msg)
			break waitReaders
		}
	}
	close(stop)
	wg.Wait()
	close(bad)
	if err != nil {
		t.Fatal(err)
	}
	for msg := range bad {
		t.Error(msg)
	}
	if reads.Load() == 0 {
		t.Fatal("no concurrent read completed")
	}
	if c, s := fingerprint(); c != n || math.Abs(s-newSum.Load().(float64)) > 1e-3 || math.Abs(s-oldSum) < 1e-6 {
		t.Fatalf("after the switch: %d vectors, sum %v (old %v)", c, s, oldSum)
	}
}

func TestReweightFailureKeepsOldSet(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	n := enrichedCatalog(t, pool, testfactory.LocalEnricher(pool, 10), 1)
	old := testfactory.CurrentSet(context.Background(), t, pool, "default")
	testfactory.Weights(context.Background(), t, pool, "default", map[string]float64{"description": 1})
	set := testfactory.BeginReweight(context.Background(), t, pool, "default")

	cctx, cancel := context.WithCancel(ctx)
	err := profiles.Reweight(cctx, pool, set.ID, profiles.ReweightOptions{BatchSize: 3, OnProgress: func(done, total int) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled re-weight: %v", err)
	}
	if got := countRows(t, pool, `SELECT count(*) FROM tool_vectors WHERE set_id = $1`, set.ID); got == 0 || got >= n {
		t.Fatalf("first batch wrote %d vectors, want some but not all of %d", got, n)
	}
	if err := profiles.FailReweight(ctx, pool, set.ID, err); err != nil {
		t.Fatal(err)
	}
	if cur := testfactory.CurrentSet(context.Background(), t, pool, "default"); cur != old {
		t.Errorf("current set %d after a failed re-weight, want the old %d", cur, old)
	}
	if got := countRows(t, pool, `SELECT count(*) FROM tool_vectors WHERE set_id = $1`, old); got != n {
		t.Errorf("old set holds %d vectors, want %d", got, n)
	}
	s, err := db.New(pool).GetVectorSet(ctx, set.ID)
	if err != nil || s.State != "failed" || s.Error == nil {
		t.Fatalf("failed set: %+v %v", s, err)
	}
	if got := countRows(t, pool, `SELECT count(*) FROM tool_vectors WHERE set_id = $1`, set.ID); got != 0 {
		t.Errorf("failed set keeps %d vectors", got)
	}
	var nb *profiles.SetNotBuildingError
	if err := profiles.Reweight(ctx, pool, set.ID, profiles.ReweightOptions{}); !errors.As(err, &nb) {
		t.Errorf("re-running a failed set: %v, want SetNotBuildingError", err)
	}
	// a new re-weight starts a fresh set
	if next := testfactory.BeginReweight(context.Background(), t, pool, "default"); next.ID == set.ID {
		t.Errorf("a new re-weight reused the failed set %d", set.ID)
	}
}

func TestReweightResumesInterruptedSet(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	n := enrichedCatalog(t, pool, testfactory.LocalEnricher(pool, 10), 1)
	testfactory.Weights(context.Background(), t, pool, "default", map[string]float64{"name": 1})
	set := testfactory.BeginReweight(context.Background(), t, pool, "default")

	cctx, cancel := context.WithCancel(ctx)
	if err := profiles.Reweight(cctx, pool, set.ID, profiles.ReweightOptions{BatchSize: 4, OnProgress: func(int, int) { cancel() }}); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted: %v", err)
	}
	partial := countRows(t, pool, `SELECT count(*) FROM tool_vectors WHERE set_id = $1`, set.ID)
	if partial != 4 {
		t.Fatalf("first batch wrote %d vectors, want 4", partial)
	}
	// the retry finds the same building set and completes it
	if again := testfactory.BeginReweight(context.Background(), t, pool, "default"); again.ID != set.ID {
		t.Fatalf("retry began set %d, want the interrupted %d", again.ID, set.ID)
	}
	var written []int
	if err := profiles.Reweight(ctx, pool, set.ID, profiles.ReweightOptions{BatchSize: 4, OnProgress: func(done, _ int) { written = append(written, done) }}); err != nil {
		t.Fatal(err)
	}
	if cur := testfactory.CurrentSet(context.Background(), t, pool, "default"); cur != set.ID {
		t.Fatalf("current set %d, want %d", cur, set.ID)
	}
	if got := countRows(t, pool, `SELECT count(*) FROM tool_vectors WHERE set_id = $1`, set.ID); got != n {
		t.Fatalf("resumed set holds %d vectors, want %d", got, n)
	}
	if got := countRows(t, pool, `SELECT count(*) FROM vector_sets WHERE profile_id = (SELECT id FROM weight_profiles WHERE name = 'default')`); got != 1 {
		t.Errorf("%d sets for the profile, want only the resumed one", got)
	}
	if len(written) == 0 || written[len(written)-1] != n {
		t.Errorf("progress %v, want it to end at %d", written, n)
	}
}
