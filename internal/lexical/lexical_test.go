package lexical_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
)

func exec(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// indexedCatalog is a new database holding n bulk-loaded tools, flushed into the index.
func indexedCatalog(t *testing.T, n int) *pgxpool.Pool {
	t.Helper()
	pool := pgtest.NewPool(t)
	bulkCatalog(t, pool, n)
	if _, err := lexical.Flush(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	return pool
}

// impactAverages are the average document length the stored impacts were computed with and
// the corpus's own.
func impactAverages(t *testing.T, pool *pgxpool.Pool) (impactAvg, avg float64) {
	t.Helper()
	if err := pool.QueryRow(context.Background(), `SELECT impact_avgdl, total_len / docs FROM search_corpus`).Scan(&impactAvg, &avg); err != nil {
		t.Fatal(err)
	}
	return impactAvg, avg
}

// bulkCatalog inserts n tools "Report number i" in one statement, as a bulk load does.
func bulkCatalog(t *testing.T, pool *pgxpool.Pool, n int) {
	t.Helper()
	exec(t, pool, `INSERT INTO sources (name, kind) VALUES ('bulk', 'catalog')`)
	exec(t, pool, `INSERT INTO tools (source_id, name, original_name, description, input_schema, content_hash)
		SELECT s.id, 'bulk__t' || g, 't' || g, 'Report number ' || g, '{"type":"object"}', 'h'
		FROM sources s, generate_series(1, $1::int) g`, n)
}

func lastVacuum(t *testing.T, pool *pgxpool.Pool) time.Time {
	t.Helper()
	var at *time.Time
	if err := pool.QueryRow(context.Background(),
		`SELECT last_vacuum FROM pg_stat_user_tables WHERE relname = 'search_postings'`).Scan(&at); err != nil {
		t.Fatal(err)
	}
	if at == nil {
		return time.Time{}
	}
	return *at
}

// A flush that indexed a bulk load vacuums and analyzes the index tables at once; a modest
// change of a larger index does not; documents that grew past the drift limit get every
// impact recomputed.
func TestFlushVacuumsBulkLoadsAndRefreshesDriftedImpacts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	bulkCatalog(t, pool, 1500)
	st, err := lexical.Flush(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if st.Indexed != 1500 || !st.Vacuumed || lastVacuum(t, pool).IsZero() {
		t.Fatalf("bulk flush: %+v, last vacuum %v", st, lastVacuum(t, pool))
	}
	first := lastVacuum(t, pool)

	// 20 tools changed of 1,500: indexed, not worth a vacuum, average barely moved
	exec(t, pool, `UPDATE tools SET description = description || ' updated' WHERE original_name IN (SELECT 't' || g FROM generate_series(1, 20) g)`)
	if st, err = lexical.Flush(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if st.Indexed != 20 || st.Vacuumed || st.Reimpacted != 0 {
		t.Fatalf("small flush: %+v", st)
	}

	// every document much longer: the average drifts, every impact is recomputed
	exec(t, pool, `UPDATE tools SET description = repeat(description || ' quarterly revenue figures ', 4)`)
	if st, err = lexical.Flush(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if st.Indexed != 1500 || st.Reimpacted != 1500 || !st.Vacuumed || !lastVacuum(t, pool).After(first) {
		t.Fatalf("drift flush: %+v", st)
	}
	var docs int64
	var total, impactAvg float64
	if err := pool.QueryRow(ctx, `SELECT docs, total_len, impact_avgdl FROM search_corpus`).Scan(&docs, &total, &impactAvg); err != nil {
		t.Fatal(err)
	}
	if avg := total / float64(docs); avg != impactAvg {
		t.Errorf("impacts computed with average %v, average is %v", impactAvg, avg)
	}
}

// A flush indexes what was queued when it began and returns, however fast others queue
// changes meanwhile. Here every batch the indexer takes queues a change of another tool,
// as enrichment workers do while a large catalog enriches: a flush that chased the queue
// until it was empty would never return.
func TestFlushIndexesWhatWasQueuedAndReturns(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool := pgtest.NewPool(t)
	exec(t, pool, `INSERT INTO sources (name, kind) VALUES ('busy', 'catalog')`)
	exec(t, pool, `INSERT INTO tools (source_id, name, original_name, description, input_schema, content_hash)
		SELECT s.id, 'busy__t' || g, 't' || g, 'Report number ' || g, '{"type":"object"}', 'h'
		FROM sources s, generate_series(1, 2 * `+strconv.Itoa(lexical.Batch)+`) g`)
	// the test's stand-in for the workers: each claimed batch queues one more change
	exec(t, pool, `CREATE FUNCTION requeue() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN INSERT INTO search_queue (tool_id) SELECT id FROM tools ORDER BY random() LIMIT 1; RETURN NULL; END $$`)
	exec(t, pool, `CREATE TRIGGER requeue AFTER DELETE ON search_queue FOR EACH STATEMENT EXECUTE FUNCTION requeue()`)
	var through int64
	if err := pool.QueryRow(ctx, `SELECT max(id) FROM search_queue`).Scan(&through); err != nil {
		t.Fatal(err)
	}
	st, err := lexical.Flush(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	var left, indexed int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM search_queue WHERE id <= $1), (SELECT count(*) FROM search_docs)`,
		through).Scan(&left, &indexed); err != nil {
		t.Fatal(err)
	}
	if left != 0 || indexed != 2*lexical.Batch || st.Indexed < 2*lexical.Batch {
		t.Fatalf("flush %+v: %d changes queued before it still wait, %d tools indexed", st, left, indexed)
	}
}

// Index makes the queued tools searchable without the upkeep: when the average document
// length drifted, it does not recompute the impacts, nor vacuum. The next Flush, though it
// indexes nothing, does both.
func TestIndexLeavesTheUpkeepToTheNextFlush(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := indexedCatalog(t, 1500)
	first := lastVacuum(t, pool)

	// every document much longer: indexed and searchable, the upkeep left
	exec(t, pool, `UPDATE tools SET description = repeat(description || ' quarterly revenue figures ', 4)`)
	n, err := lexical.Index(ctx, pool)
	if err != nil || n != 1500 {
		t.Fatalf("Index: %d %v, want 1500 tools", n, err)
	}
	var found int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM search_postings WHERE lexeme = 'quarter'`).Scan(&found); err != nil || found != 1500 {
		t.Fatalf("%d postings of the new text (%v), want 1500", found, err)
	}
	if impactAvg, avg := impactAverages(t, pool); impactAvg == avg || !lastVacuum(t, pool).Equal(first) {
		t.Fatalf("after Index: impacts of average %v (average %v), vacuumed %v (first %v)", impactAvg, avg, lastVacuum(t, pool), first)
	}

	st, err := lexical.Flush(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if st.Indexed != 0 || st.Reimpacted != 1500 || !st.Vacuumed || !lastVacuum(t, pool).After(first) {
		t.Fatalf("the flush after Index: %+v", st)
	}
	if impactAvg, avg := impactAverages(t, pool); impactAvg != avg {
		t.Errorf("after the flush: impacts of average %v, average %v", impactAvg, avg)
	}
	// nothing left: a flush with nothing to index does nothing
	if st, err := lexical.Flush(ctx, pool); err != nil || st != (lexical.Stats{}) {
		t.Errorf("an idle flush: %+v %v", st, err)
	}
}

// Flushes that find the same drift at once (the lexical_index jobs of an enrichment burst,
// one per second, several running together) recompute the impacts once: the others leave it
// to the one recomputing. The lock is released after: a later drift is recomputed again.
func TestConcurrentFlushesRecomputeDriftedImpactsOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := indexedCatalog(t, 1500)
	for round, text := range []string{" quarterly revenue figures ", " annual dividend history and payout ratios "} {
		exec(t, pool, `UPDATE tools SET description = repeat(description || $1, 4)`, text)
		if _, err := lexical.Index(ctx, pool); err != nil {
			t.Fatal(err)
		}
		const flushes = 6
		reimpacted := make(chan int, flushes)
		var wg sync.WaitGroup
		for range flushes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, err := lexical.Flush(ctx, pool)
				if err != nil {
					t.Error(err)
				}
				reimpacted <- st.Reimpacted
			}()
		}
		wg.Wait()
		close(reimpacted)
		var got []int
		for n := range reimpacted {
			if n > 0 {
				got = append(got, n)
			}
		}
		if len(got) != 1 || got[0] != 1500 {
			t.Errorf("round %d: flushes that recomputed impacts: %v, want one of 1500 tools", round, got)
		}
		impactAvg, avg := impactAverages(t, pool)
		if impactAvg != avg {
			t.Errorf("round %d: impacts of average %v, average %v", round, impactAvg, avg)
		}
	}
}

// The recompute keeps no connection between its transactions: a pool of one connection
// (TOOLGATE_DB_MAX_CONNS=1) recomputes drifted impacts instead of waiting for a second
// connection forever.
func TestFlushRecomputesOnAOneConnectionPool(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, err := postgres.Connect(ctx, pgtest.NewDB(t)+"&pool_max_conns=1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	bulkCatalog(t, pool, 600)
	if _, err := lexical.Flush(ctx, pool); err != nil {
		t.Fatal(err)
	}
	exec(t, pool, `UPDATE tools SET description = repeat(description || ' quarterly revenue figures ', 4)`)
	st, err := lexical.Flush(ctx, pool)
	if err != nil || st.Reimpacted != 600 {
		t.Fatalf("flush on one connection: %+v, %v; want 600 tools recomputed", st, err)
	}
}

// A flush that died while recomputing leaves its lease: the next flushes leave the work to
// it until the lease expires, then one of them recomputes. Nothing is held on a session
// (no advisory lock outlives its transaction), as pgbouncer in transaction mode requires.
func TestReimpactLeaseOfADeadFlush(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := indexedCatalog(t, 600)
	exec(t, pool, `UPDATE tools SET description = repeat(description || ' quarterly revenue figures ', 4)`)
	exec(t, pool, `UPDATE search_reimpact_lease SET holder = 'a flush that died', until = now() + interval '1 hour'`)
	st, err := lexical.Flush(ctx, pool)
	if err != nil || st.Indexed != 600 || st.Reimpacted != 0 {
		t.Fatalf("flush beside a running lease: %+v, %v; want 600 indexed, none recomputed", st, err)
	}
	exec(t, pool, `UPDATE search_reimpact_lease SET until = now() - interval '1 second'`)
	if st, err = lexical.Flush(ctx, pool); err != nil || st.Reimpacted != 600 {
		t.Fatalf("flush after the lease expired: %+v, %v; want 600 recomputed", st, err)
	}
	var released bool
	var advisory int
	if err := pool.QueryRow(ctx, `SELECT (SELECT until < now() FROM search_reimpact_lease),
	                                     (SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database
	                                      WHERE l.locktype = 'advisory' AND d.datname = current_database())`).Scan(&released, &advisory); err != nil {
		t.Fatal(err)
	}
	if !released || advisory != 0 {
		t.Errorf("after the recompute: lease released %v, advisory locks held %d; want true, 0", released, advisory)
	}
}

// The lease is one holder's at a time: claimed only once expired, renewed only by its
// holder while it runs, released only by its holder.
func TestReimpactLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	q := db.New(pool)
	claim := func(holder string) bool {
		t.Helper()
		ok, err := q.LexicalClaimReimpact(ctx, db.LexicalClaimReimpactParams{Holder: holder, LeaseSeconds: 60})
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	renew := func(holder string) bool {
		t.Helper()
		ok, err := q.LexicalRenewReimpact(ctx, db.LexicalRenewReimpactParams{Holder: holder, LeaseSeconds: 60})
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !claim("a") || claim("b") {
		t.Fatal("a free lease: a claims it, b must not")
	}
	if !renew("a") || renew("b") {
		t.Fatal("only the holder renews")
	}
	if err := q.LexicalReleaseReimpact(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if claim("b") {
		t.Fatal("b released a lease it does not hold")
	}
	exec(t, pool, `UPDATE search_reimpact_lease SET until = now() - interval '1 second'`)
	if !claim("b") || renew("a") {
		t.Fatal("an expired lease: b takes it, a may not renew it")
	}
	if err := q.LexicalReleaseReimpact(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if !claim("c") {
		t.Fatal("a released lease is free")
	}
}

// Reimpact recomputes impacts computed with another average document length, however small
// the drift (a flush leaves a drift under Drift alone), once; while another flush holds the
// lease it says so.
func TestReimpactRecomputesASmallDrift(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := indexedCatalog(t, 600)
	exec(t, pool, `UPDATE tools SET description = description || ' quarterly' WHERE id % 2 = 0`)
	if st, err := lexical.Flush(ctx, pool); err != nil || st.Indexed != 300 || st.Reimpacted != 0 {
		t.Fatalf("flush of a small drift: %+v, %v; want 300 indexed, none recomputed", st, err)
	}
	if n, err := lexical.Reimpact(ctx, pool); err != nil || n != 600 {
		t.Fatalf("Reimpact: %d, %v; want 600", n, err)
	}
	impactAvg, avg := impactAverages(t, pool)
	if impactAvg != avg {
		t.Errorf("impacts of average %v, average %v", impactAvg, avg)
	}
	if n, err := lexical.Reimpact(ctx, pool); err != nil || n != 0 {
		t.Errorf("Reimpact again: %d, %v; want 0", n, err)
	}
	exec(t, pool, `UPDATE tools SET description = description || ' figures' WHERE id % 2 = 0`)
	if _, err := lexical.Flush(ctx, pool); err != nil {
		t.Fatal(err)
	}
	exec(t, pool, `UPDATE search_reimpact_lease SET holder = 'another flush', until = now() + interval '1 hour'`)
	if _, err := lexical.Reimpact(ctx, pool); !errors.Is(err, lexical.ErrReimpactBusy) {
		t.Errorf("Reimpact beside a running lease: %v, want ErrReimpactBusy", err)
	}
}

// A flush cancelled while the answer to its claim of the lease is on its way (a River job
// stopped mid-flush: the claim has committed on the server, the client gives up reading)
// does not leave the lease held for a minute: the Reimpact that follows (toolgate eval's,
// after its workers stopped) recomputes instead of failing with ErrReimpactBusy. The
// flush's connection cancels its context once the server committed the claim, before the
// answer is read.
func TestReimpactLeaseOfACancelledFlush(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := indexedCatalog(t, 600)
	exec(t, pool, `UPDATE tools SET description = description || ' quarterly' WHERE id % 2 = 0`)
	if _, err := lexical.Index(ctx, pool); err != nil {
		t.Fatal(err)
	}
	jobCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	cfg := pool.Config().Copy()
	dial := cfg.ConnConfig.DialFunc
	cfg.ConnConfig.DialFunc = func(dctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(dctx, network, addr)
		return &claimCancel{Conn: c, claimed: func() {
			cancel()
			for claimed := false; !claimed; {
				if err := pool.QueryRow(context.Background(), `SELECT holder IS NOT NULL FROM search_reimpact_lease`).Scan(&claimed); err != nil {
					t.Error(err)
					return
				}
			}
		}}, err
	}
	flushes, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer flushes.Close()
	if _, err := lexical.Reimpact(jobCtx, flushes); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Reimpact: %v, want context.Canceled", err)
	}
	if n, err := lexical.Reimpact(ctx, pool); err != nil || n != 600 {
		t.Fatalf("Reimpact after a cancelled one: %d, %v; want 600 recomputed", n, err)
	}
}

// claimCancel is a connection that calls claimed once it has sent the execution of the
// lease's claim (the statement's text goes with its parse, maybe in an earlier write).
type claimCancel struct {
	net.Conn
	claimed func()
	armed   bool
	once    sync.Once
}

func (c *claimCancel) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if bytes.Contains(b, []byte("UPDATE search_reimpact_lease")) && bytes.Contains(b, []byte("until < now()")) {
		c.armed = true
	}
	if err == nil && c.armed && executes(b) {
		c.once.Do(c.claimed)
	}
	return n, err
}

// executes says whether the frontend messages b hold an Execute.
func executes(b []byte) bool {
	for len(b) >= 5 {
		if b[0] == 'E' {
			return true
		}
		n := int(binary.BigEndian.Uint32(b[1:5]))
		if n < 4 || n+1 > len(b) {
			return false
		}
		b = b[n+1:]
	}
	return false
}
