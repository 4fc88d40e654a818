package embed

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/locks"
)

// SpaceMismatchError says the configured embedder is not the one the stored vectors were
// made with: comparing a query vector from one model with tool vectors from another gives
// meaningless results, so serving stops until `toolgate reembed` rebuilds them.
type SpaceMismatchError struct {
	StoredModel     string
	StoredDims      int
	ConfiguredModel string
	ConfiguredDims  int
}

func (e *SpaceMismatchError) Error() string {
	return fmt.Sprintf("stored vectors are %s (%d dims) but the configured embedder is %s (%d dims); "+
		"run `toolgate reembed` to rebuild every vector with the configured embedder, or configure %s again",
		e.StoredModel, e.StoredDims, e.ConfiguredModel, e.ConfiguredDims, e.StoredModel)
}

// spaceLock serializes the processes that fix or change the embedding space.
const spaceLock = locks.EmbeddingSpace

// LockSpace takes, until tx ends, the lock that serializes the changes of the stored space.
func LockSpace(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", spaceLock)
	return err
}

// OlderLocal reports whether the stored space (model, dims) holds vectors the product
// itself made and e, a built-in embedder, may remake at a start without any provider: an
// older version of e's hashing embedder with e's dimension or, when e is the built-in
// default (word vectors over DefaultLocalDims hashed dimensions), any version of the hashing
// embedder of DefaultLocalDims, the default before it. Any other space is a switch someone
// asked for, which `toolgate reembed` makes (EnsureSpace refuses it).
func OlderLocal(model string, dims int, e Embedder) bool {
	l, ok := e.(*Local)
	if !ok {
		return false
	}
	var v, d int
	if n, err := fmt.Sscanf(model, localModelFormat, &v, &d); err != nil || n != 2 || d != dims {
		return false
	}
	if l.words != nil {
		return l.dims == DefaultLocalDims && dims == DefaultLocalDims && v <= localVersion
	}
	return dims == l.Dims() && v < localVersion
}

// EnsureSpace makes sure the stored embedding space is e's. When none is recorded yet it
// gives tool_vectors.embedding its dimension, builds the HNSW index of every ready set's
// partition and records e's model and dimension. When a different one is recorded it returns *SpaceMismatchError.
func EnsureSpace(ctx context.Context, pool *pgxpool.Pool, e Embedder) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", spaceLock); err != nil {
			return err
		}
		q := db.New(tx)
		sp, err := q.GetEmbeddingSpace(ctx)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return setSpace(ctx, tx, e)
		case err != nil:
			return err
		case sp.Model != e.Model() || int(sp.Dims) != e.Dims():
			return &SpaceMismatchError{StoredModel: sp.Model, StoredDims: int(sp.Dims), ConfiguredModel: e.Model(), ConfiguredDims: e.Dims()}
		}
		return nil
	})
}

// Rebuild switches the stored space to e inside tx: it drops every tool vector and every
// component embedding, re-types the vector column, rebuilds the partitions' indexes and
// records e. The
// caller enqueues the jobs that embed again.
func Rebuild(ctx context.Context, tx pgx.Tx, e Embedder) error {
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", spaceLock); err != nil {
		return err
	}
	q := db.New(tx)
	// Changing the row first waits for the jobs that are writing vectors of the old space
	// (they hold it FOR SHARE), so that the deletes below see their rows.
	if err := q.SetEmbeddingSpace(ctx, db.SetEmbeddingSpaceParams{Model: e.Model(), Dims: int32(e.Dims())}); err != nil {
		return err
	}
	if err := q.ClearComponentEmbeddings(ctx); err != nil {
		return err
	}
	if err := q.DeleteAllToolVectors(ctx); err != nil {
		return err
	}
	// the memories keep their texts; the memory sweep embeds them again in the new space
	if _, err := tx.Exec(ctx, "SELECT toolgate_retype_memories($1, false)", e.Dims()); err != nil {
		return err
	}
	return setSpace(ctx, tx, e)
}

// setSpace records e, types the column and (re)builds the HNSW indexes. tool_vectors is
// partitioned by vector set (migration 0008): the column's type is set on the parent (every
// partition follows) and each ready set's partition gets its own index
// (toolgate_index_vector_partition, which skips spaces of more than 2,000 dimensions: pgvector's
// HNSW cannot index them, they are searched exactly). A building set's partition gets its
// index when its re-weight completes. DDL with a computed dimension cannot be a prepared sqlc
// query, hence the formatted statement; dims is an int.
func setSpace(ctx context.Context, tx pgx.Tx, e Embedder) error {
	if err := db.New(tx).SetEmbeddingSpace(ctx, db.SetEmbeddingSpaceParams{Model: e.Model(), Dims: int32(e.Dims())}); err != nil {
		return err
	}
	stmts := []string{
		"SELECT toolgate_drop_vector_indexes()",
		fmt.Sprintf("ALTER TABLE tool_vectors ALTER COLUMN embedding TYPE vector(%d)", e.Dims()),
		"SELECT toolgate_index_vector_partition(id) FROM vector_sets WHERE state = 'ready'",
		// the memories' embeddings (docs/learning.md), in the same space
		fmt.Sprintf("SELECT toolgate_retype_memories(%d, true)", e.Dims()),
	}
	for _, s := range stmts {
		if _, err := tx.Exec(ctx, s); err != nil {
			return fmt.Errorf("embedding space: %s: %w", s, err)
		}
	}
	return nil
}

// CheckSpace returns *SpaceMismatchError unless the stored space is e's, and keeps it from
// changing until tx ends.
func CheckSpace(ctx context.Context, tx pgx.Tx, e Embedder) error {
	sp, err := db.New(tx).ShareEmbeddingSpace(ctx)
	if errors.Is(err, pgx.ErrNoRows) {
		return &SpaceMismatchError{ConfiguredModel: e.Model(), ConfiguredDims: e.Dims()}
	}
	if err != nil {
		return err
	}
	if sp.Model != e.Model() || int(sp.Dims) != e.Dims() {
		return &SpaceMismatchError{StoredModel: sp.Model, StoredDims: int(sp.Dims), ConfiguredModel: e.Model(), ConfiguredDims: e.Dims()}
	}
	return nil
}
