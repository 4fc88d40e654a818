package observed_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/tdwa"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// TestMigrationKeepsVectors: migration 0017 gives every tdwa profile and vector set an
// observed weight equal to its question weight, and every stored vector is still exactly
// the vector its set's new weights make of the tool's components, so no re-weight is due.
func TestMigrationKeepsVectors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	// the catalog imported by this version's code (its lexical indexer writes what the
	// latest schema has), then enriched under version 14's weights
	e := catalogOn(ctx, t, pool, 0)
	if err := postgres.MigrateDownTo(ctx, pool, 14); err != nil {
		t.Fatal(err)
	}
	// This version's enrichment reads the tools' expansion switch (migration 0040): the
	// column is there while it runs on schema 14, and gone again before migrating up.
	// Raw DDL: the test sets up a schema no migration makes.
	if _, err := pool.Exec(ctx, `ALTER TABLE tools ADD COLUMN expansion_off boolean NOT NULL DEFAULT false`); err != nil {
		t.Fatal(err)
	}
	testfactory.Enrich(ctx, t, e.enrich, slices.Collect(maps.Values(e.ids))...)
	if _, err := pool.Exec(ctx, `ALTER TABLE tools DROP COLUMN expansion_off`); err != nil {
		t.Fatal(err)
	}
	weightsBefore := weights(t, pool)
	before := vectors(t, pool)
	if err := postgres.MigrateUp(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if after := vectors(t, pool); !maps.Equal(before, after) {
		t.Fatal("the migration changed stored vectors")
	}
	after := weights(t, pool)
	if len(after) != len(weightsBefore) || len(after) < 8 {
		t.Fatalf("%d profiles and sets, were %d", len(after), len(weightsBefore))
	}
	for name, w := range after {
		old := weightsBefore[name]
		q, hasQ := old[tdwa.KindQuestion]
		if hasQ && w[tdwa.KindObserved] != q {
			t.Errorf("%s: observed weight %v, question %v", name, w[tdwa.KindObserved], q)
		}
		delete(w, tdwa.KindObserved)
		if !maps.Equal(w, old) {
			t.Errorf("%s: weights %v, were %v", name, w, old)
		}
	}

	// Each stored vector is what its set's weights now make of the tool's components.
	q := db.New(pool)
	sets, err := q.ListWritableVectorSets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids := slices.Collect(maps.Values(e.ids))
	comps, err := q.ListComponentVectors(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	byTool := map[int64][]tdwa.Component{}
	for _, c := range comps {
		byTool[c.ToolID] = append(byTool[c.ToolID], tdwa.Component{Kind: c.Kind, Ordinal: int(c.Ordinal), Vector: c.Embedding.Slice()})
	}
	checked := 0
	for _, s := range sets {
		prof, err := tdwa.ParseProfile(s.Strategy, s.Weights)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			var stored pgvector.Vector
			err := pool.QueryRow(ctx, `SELECT embedding FROM tool_vectors WHERE set_id = $1 AND tool_id = $2`, s.SetID, id).Scan(&stored)
			if errors.Is(err, pgx.ErrNoRows) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			v, err := tdwa.Combine(byTool[id], prof)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(v, stored.Slice()) {
				t.Fatalf("set %d (%s), tool %d: the stored vector is not the one the new weights make", s.SetID, s.Profile, id)
			}
			checked++
		}
	}
	if checked != len(sets)*len(ids) {
		t.Fatalf("%d vectors checked, want %d", checked, len(sets)*len(ids))
	}
}

// weights are the weights of every profile and vector set, by name.
func weights(t *testing.T, pool *pgxpool.Pool) map[string]map[string]float64 {
	t.Helper()
	rows, err := pool.Query(context.Background(), `
		SELECT 'profile ' || name, weights FROM weight_profiles
		UNION ALL SELECT 'set ' || id, weights FROM vector_sets`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]float64{}
	for rows.Next() {
		var name string
		var raw []byte
		if err := rows.Scan(&name, &raw); err != nil {
			t.Fatal(err)
		}
		w := map[string]float64{}
		if err := json.Unmarshal(raw, &w); err != nil {
			t.Fatal(err)
		}
		out[name] = w
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
