package sources_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/jobs"
)

// BenchmarkImportCatalog times sources.Import, the work behind `toolgate import` and
// PUT /v1/sources/{name}/tools, of a new source of 5,000 and 50,000 tools into an empty
// database: validation, the diff (catalog.Apply), the enrich_tool jobs queued in River and
// the sync record, committed, then the lexical index flushed: the tools are searchable by
// name and description when it returns.
func BenchmarkImportCatalog(b *testing.B) {
	for _, n := range []int{5000, 50000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			tools := benchCatalog(n)
			ctx := context.Background()
			for b.Loop() {
				b.StopTimer()
				pool, err := postgres.Connect(ctx, pgtest.NewDB(b))
				if err != nil {
					b.Fatal(err)
				}
				rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, jobs.Options{})
				if err != nil {
					b.Fatal(err)
				}
				list := append([]catalog.Tool(nil), tools...)
				b.StartTimer()
				_, res, err := sources.Import(ctx, pool, jobs.NewQueue(rc), "bench", list)
				b.StopTimer()
				if err != nil || res.Created != n {
					b.Fatalf("%+v %v", res, err)
				}
				pool.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tools/s")
		})
	}
}

// benchCatalog is a catalog of n tools shaped like real MCP tools.
func benchCatalog(n int) []catalog.Tool {
	tools := make([]catalog.Tool, n)
	for i := range tools {
		tools[i] = catalog.Tool{
			Name:        fmt.Sprintf("get_record_%d", i),
			Description: fmt.Sprintf("Returns record %d of a company account: its fields, history and related records.", i),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"record id"},` +
				`"limit":{"type":"integer","minimum":1,"maximum":100},"format":{"type":"string","enum":["json","csv"]}},"required":["id"]}`),
			Annotations: json.RawMessage(`{"readOnlyHint":true}`),
		}
	}
	return tools
}
