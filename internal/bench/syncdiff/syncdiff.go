// Package syncdiff times toolgate's side of a sync of a large source (the server's listing
// excluded): hash the listed tools, validate the changed ones and apply the diff in one
// transaction, as sources.Sync does.
package syncdiff

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
)

// Run stores tools once in a temporary source of pool's database, times the diff of the
// same listing unchanged and with 1% of it changed at each level, rolling back every
// measured diff, and deletes the source.
func Run(ctx context.Context, pool *pgxpool.Pool, tools []catalog.Tool, levels []bench.Options) ([]bench.Result, error) {
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	name := "bench-sync-" + hex.EncodeToString(suffix)
	q := db.New(pool)
	src, err := q.CreateSource(ctx, db.CreateSourceParams{Name: name, Kind: db.SourceMCPHTTP, Config: json.RawMessage(`{"url":"http://bench.invalid/mcp"}`)})
	if err != nil {
		return nil, err
	}
	defer func() { _, _ = q.DeleteSource(context.WithoutCancel(ctx), name) }()
	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		_, err := catalog.Apply(ctx, tx, src, tools, catalog.ApplyOptions{})
		return err
	}); err != nil {
		return nil, err
	}
	onePercent := append([]catalog.Tool(nil), tools...)
	for i := 0; i < len(onePercent); i += 100 {
		onePercent[i].Description += " (revised)"
	}
	diff := func(listed []catalog.Tool, wantUpdated int) bench.Op {
		return func(ctx context.Context, _ int) error {
			tx, err := pool.Begin(ctx)
			if err != nil {
				return err
			}
			defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
			res, err := catalog.Apply(ctx, tx, src, append([]catalog.Tool(nil), listed...), catalog.ApplyOptions{Validate: true})
			if err != nil {
				return err
			}
			if res.Updated != wantUpdated || res.Unchanged != len(listed)-wantUpdated {
				return fmt.Errorf("diff: got %+v, want %d updated", res, wantUpdated)
			}
			return nil
		}
	}
	ops := []struct {
		name string
		op   bench.Op
	}{
		{fmt.Sprintf("sync diff %d tools, no change", len(tools)), diff(tools, 0)},
		{fmt.Sprintf("sync diff %d tools, 1%% changed", len(tools)), diff(onePercent, (len(tools)+99)/100)},
	}
	var results []bench.Result
	for _, o := range ops {
		for _, opts := range levels {
			r, err := bench.Run(ctx, o.name, opts, o.op)
			if err != nil {
				return nil, err
			}
			if r.FirstError != nil {
				return nil, fmt.Errorf("%s: %w", o.name, r.FirstError)
			}
			results = append(results, r)
		}
	}
	return results, nil
}
