package api_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// searchableCatalog is a fresh database whose catalog source holds tools, enriched with
// the local embedder (three questions a tool) and in the lexical index, with the search
// log's partitions made: ready to be searched and labelled.
func searchableCatalog(t *testing.T, source string, tools ...catalog.Tool) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	if _, err := db.New(pool).EnsureSearchLogPartitions(ctx, 2); err != nil {
		t.Fatal(err)
	}
	_, res := testfactory.Catalog(ctx, t, pool, source, tools, nil)
	testfactory.Enrich(ctx, t, testfactory.LocalEnricher(pool, 3), res.Changed...)
	if _, err := lexical.Flush(ctx, pool); err != nil {
		t.Fatal(err)
	}
	return pool
}
