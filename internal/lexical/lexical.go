// Package lexical keeps the catalog's BM25 index (search_docs, search_postings,
// search_lexemes, search_corpus; sql/functions/lexical.sql) in step with the tools.
//
// Writers of tools and components only queue the ids of the tools they changed (a trigger
// appends them to search_queue). The index is written by one indexer at a time, which
// drains the queue in batches: Index, called after an import or a PUT of a catalog commits
// so the written tools are searchable when the call returns, Flush, called after the other
// catalog writes (sync, admin changes), and the lexical_index River job (a Flush),
// debounced after enrichment. Scores are always exact; the precomputed impacts that choose
// a term's candidates are recomputed when the average document length drifts, by Flush.
package lexical

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/meaning"
)

// Batch is how many queued tools one indexer transaction recomputes.
const Batch = 2000

// Drift is how far (relative) the average document length may move from the one the stored
// impacts were computed with before they are all recomputed.
const Drift = 0.2

// reimpactBatch is how many tools' impacts one transaction recomputes, under the indexer's
// lock: small, so that a catalog write's batch (Index) waits for one of them at most, not
// for seconds (a batch of 2,000 held the lock 4 s on a loaded 2-core machine).
const reimpactBatch = 500

// A flush that indexed at least vacuumAfter tools, and at least vacuumShare of the indexed
// documents, vacuums and analyzes the index tables: after a bulk load the visibility map is
// unset and the planner's statistics are stale until autovacuum comes by, minutes later, and
// a search should be fast at once. The share keeps a large catalog from being vacuumed
// after every modest change (a vacuum reads every index of the tables it cleans).
const (
	vacuumAfter = 1000
	vacuumShare = 0.1
)

// Stats is what a flush did.
type Stats struct {
	Indexed    int  // tools whose index rows were recomputed
	Reimpacted int  // tools whose postings' impacts were recomputed for a drifted average
	Vacuumed   bool // the index tables were vacuumed and analyzed
}

// Flush indexes every tool queued when it is called, batch by batch, oldest first (each
// batch waits for a concurrent indexer's batch, if any), then does the indexer's upkeep:
// recomputes impacts if the average document length drifted (also when it indexed nothing:
// Index leaves the upkeep to it), and vacuums after a bulk load. A write that commits and
// then flushes is searchable when Flush returns. Tools queued meanwhile are left to the
// next flush (the debounced lexical_index job): enrichment workers re-queue tools as they
// finish them, and a flush that chased them returned only once they paused (an import of
// 4,000 tools into a server enriching took 12–14 s instead of 3).
func Flush(ctx context.Context, pool *pgxpool.Pool) (Stats, error) {
	var st Stats
	n, err := Index(ctx, pool)
	st.Indexed = n
	if err != nil {
		return st, err
	}
	c, err := db.New(pool).LexicalCorpus(ctx)
	if err != nil {
		return st, fmt.Errorf("lexical index: corpus: %w", err)
	}
	if st.Reimpacted, err = reimpactIfDrifted(ctx, pool, c); err != nil {
		return st, err
	}
	if st.Reimpacted > 0 || st.Indexed >= vacuumAfter && float64(st.Indexed) >= vacuumShare*float64(c.Docs) {
		// Outside any transaction (VACUUM cannot run in one). It waits for no writer.
		if _, err := pool.Exec(ctx, "VACUUM (ANALYZE) search_postings, search_docs, search_lexemes"); err != nil {
			return st, fmt.Errorf("vacuum the lexical index: %w", err)
		}
		st.Vacuumed = true
	}
	return st, nil
}

// Index indexes every tool queued when it is called, as Flush does, without the upkeep:
// what an import or a PUT of a catalog needs before it returns, its tools searchable. The
// upkeep is left to the lexical_index job's Flush (asked for by the enrichment the write
// queued, and run every minute), and the vacuum of a bulk load to autovacuum. Done in the
// write, it made an import into a server that was enriching wait for the impacts of every
// document to be recomputed under the indexer's lock (13 s for 5,000 documents while 10
// workers enriched) and for a vacuum. Scores stay exact meanwhile: a drifted average only
// makes the stored impacts choose a term's candidates less well.
func Index(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	through, err := db.New(pool).LexicalQueueLast(ctx)
	if err != nil {
		return 0, fmt.Errorf("lexical index: %w", err)
	}
	indexed := 0
	for through > 0 {
		n, err := indexBatch(ctx, pool)
		if err != nil {
			return indexed, err
		}
		indexed += n
		if n == 0 {
			break
		}
		left, err := db.New(pool).LexicalQueuedThrough(ctx, through)
		if err != nil {
			return indexed, fmt.Errorf("lexical index: %w", err)
		}
		if !left {
			break
		}
	}
	return indexed, nil
}

// indexBatch runs one indexer transaction and returns the number of tools it indexed.
func indexBatch(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	var n int
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		if err := q.LexicalAsyncCommit(ctx); err != nil {
			return err
		}
		ids, err := q.LexicalIndexBatch(ctx, Batch)
		if err != nil {
			return err
		}
		n = len(ids)
		return writeMeanings(ctx, q, ids)
	})
	if err != nil {
		return 0, fmt.Errorf("lexical index: %w", err)
	}
	return n, nil
}

// writeMeanings stores the meanings (internal/meaning) of the tools just indexed, in the
// indexer's transaction: a tool's meaning changes with its text, as its index rows do. A
// tool that is gone, or whose text has no word with a sense, has none. A tool deleted after
// its text was read gets its meaning all the same (there is no foreign key to fail), and the
// delete, which queued it, has the next batch remove it.
func writeMeanings(ctx context.Context, q *db.Queries, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	space, err := meaning.Builtin()
	if err != nil {
		return err
	}
	rows, err := q.LexicalMeaningTexts(ctx, ids)
	if err != nil {
		return err
	}
	var w db.LexicalWriteMeaningsParams
	found := make(map[int64]bool, len(rows))
	for _, r := range rows {
		found[r.ID] = true
		if v, ok := space.Vector(r.Text); ok {
			w.Ids = append(w.Ids, r.ID)
			w.Meanings = append(w.Meanings, v)
		} else {
			found[r.ID] = false
		}
	}
	var none []int64
	for _, id := range ids {
		if !found[id] {
			none = append(none, id)
		}
	}
	if len(none) > 0 {
		if err := q.LexicalDeleteMeanings(ctx, none); err != nil {
			return err
		}
	}
	if len(w.Ids) == 0 {
		return nil
	}
	return q.LexicalWriteMeanings(ctx, w)
}

// reimpactLease is how long a recompute's lease lasts unless a batch renews it: a flush that
// died mid-way holds up the next recompute this long at most.
const reimpactLease = time.Minute

// reimpactIfDrifted recomputes every posting's impact with the current average document
// length of c when it moved more than Drift from the one they were computed with, in
// batches of reimpactBatch tools. Returns the number of tools redone.
//
// One flush at a time does it, the holder of the lease search_reimpact_lease (tried, not
// waited for): a flush that finds another one recomputing leaves the work to it and
// returns, as the lexical_index jobs of an enrichment burst do, one per second, each of
// which would otherwise recompute every impact at once with the others. The lease lives in
// a table, claimed, renewed and released by ordinary transactions, because nothing may be
// kept on a database session between transactions: behind pgbouncer in transaction mode a
// session-level lock and its release can reach different server connections.
func reimpactIfDrifted(ctx context.Context, pool *pgxpool.Pool, c db.LexicalCorpusRow) (int, error) {
	n, _, err := reimpact(ctx, pool, c, drifted)
	return n, err
}

// ErrReimpactBusy is Reimpact's answer while another flush holds the recompute's lease.
var ErrReimpactBusy = errors.New("lexical index: another flush is recomputing the impacts")

// Reimpact recomputes every posting's impact with the current average document length unless
// they were computed with exactly that one, drifted or not: rankings then depend on the
// catalog alone, not on when its last recompute ran (toolgate eval calls it after enriching
// a dataset). Returns the number of tools redone, or ErrReimpactBusy.
func Reimpact(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	c, err := db.New(pool).LexicalCorpus(ctx)
	if err != nil {
		return 0, fmt.Errorf("lexical index: corpus: %w", err)
	}
	n, mine, err := reimpact(ctx, pool, c, stale)
	if err == nil && !mine {
		err = ErrReimpactBusy
	}
	return n, err
}

// stale says whether the impacts were computed with another average document length than
// the corpus's.
func stale(c db.LexicalCorpusRow) bool {
	return c.Docs > 0 && c.ImpactAvgdl != c.TotalLen/float64(c.Docs)
}

// reimpact recomputes the impacts with the corpus's average document length when need says
// so, holding the lease; mine is false when another flush held it.
func reimpact(ctx context.Context, pool *pgxpool.Pool, c db.LexicalCorpusRow, need func(db.LexicalCorpusRow) bool) (n int, mine bool, err error) {
	if !need(c) {
		return 0, true, nil
	}
	q := db.New(pool)
	holder := rand.Text()
	lease := reimpactLease.Seconds()
	// The claim is waited for whatever ctx says: cancelled in flight, it still commits on the
	// server, unseen, and left a lease nobody released for reimpactLease (a flush of a River
	// job stopped mid-claim made toolgate eval's Reimpact find the index busy). It is one
	// row's update, which waits at most for a running batch's renewal.
	mine, err = q.LexicalClaimReimpact(context.WithoutCancel(ctx), db.LexicalClaimReimpactParams{Holder: holder, LeaseSeconds: lease})
	if err != nil || mine {
		// released also when the claim failed: it may have committed all the same (the
		// connection broke after it); a lease not released (the database went away)
		// expires on its own
		defer func() { _ = q.LexicalReleaseReimpact(context.WithoutCancel(ctx), holder) }()
	}
	if err != nil || !mine {
		if err != nil {
			err = fmt.Errorf("lexical index: claim the recompute: %w", err)
		}
		return 0, mine, err
	}
	// the flush that held the lease before may have just recomputed them
	if c, err = q.LexicalCorpus(ctx); err != nil {
		return 0, true, fmt.Errorf("lexical index: corpus: %w", err)
	}
	if !need(c) {
		return 0, true, nil
	}
	avg := c.TotalLen / float64(c.Docs)
	done := 0
	for after := int64(0); ; {
		var last int64
		held := true
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			q := db.New(tx)
			var err error
			// each batch renews the lease in its own transaction: a flush that lost it (it
			// stalled past the lease, and another one took over) does no batch more
			if held, err = q.LexicalRenewReimpact(ctx, db.LexicalRenewReimpactParams{Holder: holder, LeaseSeconds: lease}); err != nil || !held {
				return err
			}
			if err := q.LexicalAsyncCommit(ctx); err != nil {
				return err
			}
			last, err = q.LexicalReimpact(ctx, db.LexicalReimpactParams{AfterID: after, N: reimpactBatch, Avgdl: avg})
			return err
		})
		if err != nil {
			return done, true, fmt.Errorf("lexical index: recompute impacts: %w", err)
		}
		if !held {
			return min(done, int(c.Docs)), true, nil
		}
		if last == 0 {
			break
		}
		done += reimpactBatch
		after = last
	}
	if err := q.LexicalSetImpactAvgdl(ctx, avg); err != nil {
		return done, true, fmt.Errorf("lexical index: %w", err)
	}
	return min(done, int(c.Docs)), true, nil
}

// drifted says whether the corpus's average document length moved more than Drift from the
// one its impacts were computed with.
func drifted(c db.LexicalCorpusRow) bool {
	if c.Docs == 0 {
		return false
	}
	avg := c.TotalLen / float64(c.Docs)
	return c.ImpactAvgdl <= 0 || math.Abs(avg-c.ImpactAvgdl) > Drift*c.ImpactAvgdl
}
