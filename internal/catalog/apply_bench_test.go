package catalog_test

import (
	"context"
	"encoding/json"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/pgtest"
)

// benchTools is a source of n tools shaped like real MCP tools.
func benchTools(n int, changedEvery int) []catalog.Tool {
	tools := make([]catalog.Tool, n)
	for i := range tools {
		desc := fmt.Sprintf("Returns the quarterly financial statement %d of a listed company: revenue, margins, cash flow and guidance.", i)
		if changedEvery > 0 && i%changedEvery == 0 {
			desc += " (revised)"
		}
		tools[i] = catalog.Tool{
			Name: fmt.Sprintf("get_statement_%d", i), Description: desc,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"ticker":{"type":"string","description":"Stock ticker"},` +
				`"quarter":{"type":"string","enum":["Q1","Q2","Q3","Q4"]},"year":{"type":"integer","minimum":1990}},"required":["ticker","year"]}`),
			Annotations: json.RawMessage(`{"readOnlyHint":true,"openWorldHint":true}`),
		}
	}
	return tools
}

// benchmarkDiff measures toolgate's side of a sync of a 5,000-tool source whose catalog is
// already stored, as sources.Sync does it: hash the listed tools, validate the changed
// ones and apply the diff in a transaction (rolled back, so every iteration sees the same
// stored state).
func benchmarkDiff(b *testing.B, changedEvery int) {
	ctx := context.Background()
	pool := pgtest.NewPool(b)
	src, err := db.New(pool).CreateSource(ctx, db.CreateSourceParams{Name: "bench", Kind: "mcp_http", Config: json.RawMessage(`{}`)})
	if err != nil {
		b.Fatal(err)
	}
	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		_, err := catalog.Apply(ctx, tx, src, validated(b, benchTools(5000, 0)), catalog.ApplyOptions{})
		return err
	}); err != nil {
		b.Fatal(err)
	}
	listed := benchTools(5000, changedEvery)
	// The machine may be shared: besides wall time, report the CPU time of the process
	// (toolgate's share; PostgreSQL's own work is not in it) per diff.
	cpu0 := cpuTime()
	for b.Loop() {
		tools := append([]catalog.Tool(nil), listed...)
		tx, err := pool.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		res, err := catalog.Apply(ctx, tx, src, tools, catalog.ApplyOptions{Validate: true})
		if err != nil {
			b.Fatal(err)
		}
		_ = tx.Rollback(ctx)
		want := 0
		if changedEvery > 0 {
			want = 5000 / changedEvery
		}
		if res.Updated != want || res.Unchanged != 5000-want {
			b.Fatalf("got %+v", res)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func validated(b *testing.B, tools []catalog.Tool) []catalog.Tool {
	for i := range tools {
		if err := tools[i].Validate(); err != nil {
			b.Fatal(err)
		}
	}
	return tools
}

func BenchmarkSyncDiff5000NoChange(b *testing.B)          { benchmarkDiff(b, 0) }
func BenchmarkSyncDiff5000OnePercentChanged(b *testing.B) { benchmarkDiff(b, 100) }

// BenchmarkApply times catalog.Apply on catalogs of 5,000 and 50,000 tools, in a transaction
// rolled back after each iteration:
//
//   - import: every tool is new (`toolgate import` or PUT /v1/sources/{name}/tools of a new
//     source; the tools are validated beforehand, as sources.Import does);
//   - mixed: a stored catalog of n tools is synced with a list in which every 10th tool
//     changed, every 20th is gone and n/20 are new (validated by Apply, as a sync does).
//
// The schema is as migrated: the statements' triggers queue the changed tools for the
// lexical index (which is not flushed here; internal/sources BenchmarkImportCatalog includes it).
func BenchmarkApply(b *testing.B) {
	for _, n := range []int{5000, 50000} {
		b.Run(fmt.Sprintf("import/tools=%d", n), func(b *testing.B) { benchmarkApply(b, n, false) })
		b.Run(fmt.Sprintf("mixed/tools=%d", n), func(b *testing.B) { benchmarkApply(b, n, true) })
	}
}

func benchmarkApply(b *testing.B, n int, mixed bool) {
	ctx := context.Background()
	pool := pgtest.NewPool(b)
	src, err := db.New(pool).CreateSource(ctx, db.CreateSourceParams{Name: "bench", Kind: "mcp_http", Config: json.RawMessage(`{}`)})
	if err != nil {
		b.Fatal(err)
	}
	listed := validated(b, benchTools(n, 0))
	opts := catalog.ApplyOptions{}
	want := catalog.Result{Created: n}
	if mixed {
		if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			_, err := catalog.Apply(ctx, tx, src, listed, catalog.ApplyOptions{})
			return err
		}); err != nil {
			b.Fatal(err)
		}
		listed = mixedList(benchTools(n+n/20, 10), n)
		opts.Validate = true
		// Of the stored tools, every 20th is gone and the other half of every 10th changed.
		want = catalog.Result{Created: n / 20, Updated: n / 20, Deleted: n / 20, Unchanged: n - n/10}
	}
	cpu0 := cpuTime()
	for b.Loop() {
		tools := append([]catalog.Tool(nil), listed...)
		tx, err := pool.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		res, err := catalog.Apply(ctx, tx, src, tools, opts)
		if err != nil {
			b.Fatal(err)
		}
		_ = tx.Rollback(ctx)
		if res.Created != want.Created || res.Updated != want.Updated || res.Deleted != want.Deleted || res.Unchanged != want.Unchanged {
			b.Fatalf("got %+v, want %+v", res, want)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tools/s")
}

// mixedList is tools (n stored ones, then new ones) without every 20th of the stored ones.
func mixedList(tools []catalog.Tool, n int) []catalog.Tool {
	out := make([]catalog.Tool, 0, len(tools))
	for i, t := range tools {
		if i < n && i%20 == 0 {
			continue
		}
		out = append(out, t)
	}
	return out
}
