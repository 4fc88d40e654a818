// Package vectors is the one writer of the vector index (tool_vectors, a partition per
// vector set): component vectors in, the TDWA vector of each set out. Enrichment, the
// observed queries and re-weighting produce or pick the components; this package combines
// them with each set's own weights (package tdwa) and writes the result, and it makes a
// profile's first set while the catalog is empty.
//
// Every function that writes runs inside the caller's transaction, which has taken the
// tool rows it writes for first (LockToolHash, or a re-weight's building set that nobody
// else fills): the writes here are step 4 of the lock order (docs/architecture.md#lock-order,
// internal/locks/locks.go), vector_sets rows FOR KEY SHARE, then tool_vectors rows.
package vectors

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/tdwa"
)

// Write writes the tool's vector, combined from comps, into every ready and building
// vector set, each with the weights it was created with (so a set stays one coherent
// weighting while its profile's weights change). A set whose weights give none of the
// tool's kinds a weight gets no vector for it. Returns the vectors written.
func Write(ctx context.Context, q *db.Queries, toolID int64, comps []tdwa.Component) (int, error) {
	sets, err := q.ListWritableVectorSets(ctx)
	if err != nil {
		return 0, err
	}
	var vp []db.UpsertToolVectorParams
	for _, s := range sets {
		prof, err := tdwa.ParseProfile(s.Strategy, s.Weights)
		if err != nil {
			return 0, fmt.Errorf("weight profile %s: %w", s.Profile, err)
		}
		v, ok, err := combine(comps, prof)
		if err != nil {
			return 0, fmt.Errorf("weight profile %s: %w", s.Profile, err)
		}
		if ok {
			vp = append(vp, db.UpsertToolVectorParams{SetID: s.SetID, ToolID: toolID, Embedding: v})
		}
	}
	if err := db.ExecBatch(q.UpsertToolVector(ctx, vp)); err != nil {
		return 0, fmt.Errorf("write tool vectors: %w", err)
	}
	return len(vp), nil
}

// combine is tdwa.Combine, with a tool that has none of the kinds prof weighs reported as
// no vector (ok false) rather than as an error.
func combine(comps []tdwa.Component, prof tdwa.Profile) (pgvector.Vector, bool, error) {
	v, err := tdwa.Combine(comps, prof)
	var nc *tdwa.NoComponentsError
	if errors.As(err, &nc) {
		return pgvector.Vector{}, false, nil
	}
	if err != nil {
		return pgvector.Vector{}, false, err
	}
	return pgvector.NewVector(v), true, nil
}

// EnsureCurrentSets gives every profile without a current vector set a new ready one while
// the catalog has no embedded tool yet, so that the first enrichments have somewhere to go
// (the sets then fill as the catalog is enriched). Only the active profile's set gets its
// HNSW index now: the others' are deferred (the vector_sets_defer_index trigger of
// sql/functions/partitions.sql; BuildDeferredIndexes builds them), since inserting every
// tool into five graphs one by one was most of the cost of enriching a new catalog, and one
// CREATE INDEX after the burst costs a fraction of it. A deferred set still receives every
// vector, so it is never partial: until its index exists it is searched exactly. A profile made later, over an embedded
// catalog, waits for its re-weight: a set started by the next enrichment would hold only
// the tools enriched from then on, and could be activated half empty. Concurrent callers
// serialize on the profile rows and the later ones find the sets made. It runs in its own
// transaction, before the caller takes any tool row.
func EnsureCurrentSets(ctx context.Context, pool *pgxpool.Pool) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		ids, err := q.LockProfilesWithoutSet(ctx)
		if err != nil || len(ids) == 0 {
			return err
		}
		embedded, err := q.CatalogHasEmbeddings(ctx)
		if err != nil || embedded {
			return err
		}
		for _, id := range ids {
			set, err := q.CreateVectorSet(ctx, db.CreateVectorSetParams{ProfileID: id, State: db.VectorSetReady})
			if err != nil {
				return err
			}
			if err := q.SetProfileCurrentSet(ctx, db.SetProfileCurrentSetParams{ID: id, CurrentSet: pgtype.Int8{Int64: set, Valid: true}}); err != nil {
				return err
			}
		}
		return nil
	})
}

// BuildDeferredIndex builds the HNSW index of ready set setID if its index was deferred, in
// one transaction with clearing the set's flag; it reports whether it built one. A killed
// build leaves the flag set and nothing half made (CREATE INDEX is transactional), so the
// next call builds it again. Enrichment writes to that set wait for the build.
func BuildDeferredIndex(ctx context.Context, pool *pgxpool.Pool, setID int64) (bool, error) {
	_, err := db.New(pool).BuildDeferredVectorIndex(ctx, setID)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("vector set %d: build deferred index: %w", setID, err)
	}
	return true, nil
}

// BuildDeferredIndexes builds the index of every ready set whose index was deferred, one set
// per transaction, and returns how many it built.
func BuildDeferredIndexes(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	ids, err := db.New(pool).ListDeferredVectorIndexes(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		built, err := BuildDeferredIndex(ctx, pool, id)
		if err != nil {
			return n, err
		}
		if built {
			n++
		}
	}
	return n, nil
}
