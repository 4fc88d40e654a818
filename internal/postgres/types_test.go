package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
)

// A pool whose connection was opened before the first migration created the vector
// extension (as `toolgate demo` and `serve` open theirs on an empty database) knows the
// pgvector types once MigrateUp returns: arrays of vectors and sparse vectors are sent as
// such, also after a migrate down to nothing and up again (new type oids).
func TestPoolKnowsVectorTypesAfterMigrating(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, pgtest.ServerURL())
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("toolgate_types_%d", rand.Uint64())
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	// admin stays open for the drop: a deferred Close would run before the cleanup
	t.Cleanup(func() {
		if _, err := admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("dropping %s: %v", name, err)
		}
		admin.Close(context.Background())
	})

	pool, err := postgres.Connect(ctx, pgtest.URLFor(name), postgres.WithMaxConns(2))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	check := func(when string) {
		t.Helper()
		var n int
		err := pool.QueryRow(ctx, `SELECT cardinality($1::sparsevec[]) + cardinality($2::vector[])`,
			[]pgvector.SparseVector{pgvector.NewSparseVectorFromMap(map[int32]float32{3: 1}, 8)},
			[]pgvector.Vector{pgvector.NewVector([]float32{1, 2})}).Scan(&n)
		if err != nil || n != 2 {
			t.Fatalf("%s: %d, %v", when, n, err)
		}
	}
	if err := postgres.MigrateUp(ctx, pool); err != nil {
		t.Fatal(err)
	}
	check("after the first migration")
	if err := postgres.MigrateDown(ctx, pool, 0); err != nil {
		t.Fatal(err)
	}
	if err := postgres.MigrateUp(ctx, pool); err != nil {
		t.Fatal(err)
	}
	check("after down and up")
}
