package profiles_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/profiles"
)

// benchTools is the catalog size of the re-weighting benchmark.
const benchTools = 50_000

// seedBenchCatalog stores n tools with five embedded components each (name, description,
// parameters, two questions), written directly with COPY: the ScaleMCP templates over
// synthetic companies, embedded with the local embedder, so vectors cluster by function and
// company like real ones instead of being uniform noise. The components are dated an hour
// back, as in a catalog enriched earlier.
func seedBenchCatalog(b *testing.B, pool *pgxpool.Pool, n int) {
	b.Helper()
	ctx := context.Background()
	local := embed.NewLocal(384)
	if err := embed.EnsureSpace(ctx, pool, local); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO sources (name, kind) VALUES ('bench', 'catalog')`); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO tools (source_id, name, original_name, description, input_schema, content_hash)
		SELECT (SELECT id FROM sources), 'bench__tool_' || i, 'tool_' || i, '', '{"type":"object"}', 'h' || i
		FROM generate_series(1, $1::int) i`, n); err != nil {
		b.Fatal(err)
	}
	rows, err := pool.Query(ctx, `SELECT id FROM tools ORDER BY id`)
	if err != nil {
		b.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		b.Fatal(err)
	}
	at := time.Now().Add(-time.Hour)
	var comps [][]any
	for i, id := range ids {
		tpl := dataset.Templates[i%len(dataset.Templates)]
		company := fmt.Sprintf("Company %d", i/len(dataset.Templates))
		fn := strings.ReplaceAll(tpl.Function, "_", " ")
		texts := map[string][]string{
			"name":        {"get " + strings.ToLower(company) + " " + fn},
			"description": {strings.ReplaceAll(tpl.Description, "{company}", company)},
			"parameters":  {tpl.Schema},
			"question":    {"What is the " + fn + " of " + company + "?", "Show me " + company + " " + fn},
		}
		for kind, ts := range texts {
			for ord, text := range ts {
				comps = append(comps, []any{id, kind, int32(ord), text, "h", pgvector.NewVector(local.Vector(text)), local.Model(), at})
			}
		}
	}
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"tool_components"},
		[]string{"tool_id", "kind", "ordinal", "text", "text_hash", "embedding", "model", "updated_at"},
		pgx.CopyFromRows(comps)); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE`); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkReweight re-weights the default profile over 50,000 tools: fill the new set's
// partition (no index) in batches of ReweightBatch, build its HNSW index in bulk, catch up,
// switch, drop the previous set's partition. The re-weight code takes no embedder, so it
// makes no embedding call. build-s/op is the filling alone.
//
//	go test -run '^$' -bench BenchmarkReweight -benchtime 1x ./internal/profiles
func BenchmarkReweight(b *testing.B) {
	b.Run("partitioned", func(b *testing.B) {
		pool := pgtest.NewPool(b)
		ctx := context.Background()
		seedBenchCatalog(b, pool, benchTools)
		weights := []string{
			`{"name": 0.3, "description": 0.3, "parameters": 0.1, "question": 0.3}`,
			`{"name": 0.1, "description": 0.2, "parameters": 0.1, "question": 0.6}`,
		}
		reweight := func(i int) (build time.Duration) {
			if _, err := pool.Exec(ctx, `UPDATE weight_profiles SET weights = $1 WHERE name = 'default'`, weights[i%2]); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			_, err := profiles.RunReweight(ctx, pool, "default", profiles.ReweightOptions{OnProgress: func(done, total int) {
				if done == total {
					build = time.Since(start)
				}
			}})
			if err != nil {
				b.Fatal(err)
			}
			return build
		}
		reweight(0) // the current set the timed re-weights replace
		i := 1
		var build time.Duration
		for b.Loop() {
			build += reweight(i)
			i++
		}
		b.ReportMetric(build.Seconds()/float64(b.N), "build-s/op")
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM tool_vectors`).Scan(&n); err != nil || n != benchTools {
			b.Fatalf("%d tool vectors after re-weighting (%v), want %d", n, err, benchTools)
		}
	})
}
