package jobs

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/sources"
)

// ImportCatalog is sources.Import with the jobs inserted by rc.
//
// Deprecated: call sources.Import(ctx, pool, jobs.NewQueue(rc), name, tools). It is kept
// only for cmd/toolgate/evalrun.go (owned by the evaluation work, issue 17's note); delete
// it once that file has switched.
func ImportCatalog(ctx context.Context, pool *pgxpool.Pool, rc *river.Client[pgx.Tx], name string, tools []catalog.Tool) (db.Source, catalog.Result, error) {
	return sources.Import(ctx, pool, NewQueue(rc), name, tools)
}
