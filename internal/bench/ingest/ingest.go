// Package ingest times making a catalog lexically searchable through the two paths users
// take: an import (sources.Import, which returns once the tools are in the lexical index)
// and PUT /v1/sources/{name}/tools over HTTP, optionally while a River client enriches
// another catalog.
package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/bench/httpop"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/riverdb"
	"github.com/toolgate/toolgate/internal/search/searchbench"
	"github.com/toolgate/toolgate/internal/sources"
)

// Config is what Run times.
type Config struct {
	Sizes  []int           // catalog sizes
	Levels []bench.Options // per size, each path
	Pool   *pgxpool.Pool
	Queue  sources.Queue // the import's follow-up jobs
	Base   string        // the API server's base URL
	Log    *slog.Logger
}

// Run writes the searchbench catalog of each size into a new source per operation, by
// import and by PUT, and returns the timings. Later runs write into a catalog that already
// holds the earlier runs' tools.
func Run(ctx context.Context, c Config) ([]bench.Result, error) {
	hc := &http.Client{Timeout: 10 * time.Minute}
	var results []bench.Result
	source := 0
	for _, n := range c.Sizes {
		tools := Catalog(n, 3)
		var body bytes.Buffer
		for _, tl := range tools {
			line, err := json.Marshal(tl)
			if err != nil {
				return nil, err
			}
			body.Write(append(line, '\n'))
		}
		ops := []struct {
			name string
			op   bench.Op
		}{
			{fmt.Sprintf("import %d tools (searchable on return)", n), func(ctx context.Context, _ int) error {
				source++
				_, _, err := sources.Import(ctx, c.Pool, c.Queue, "ingest-"+strconv.Itoa(source), tools)
				return err
			}},
			{fmt.Sprintf("PUT /v1/sources/{name}/tools, %d tools", n), func(ctx context.Context, _ int) error {
				source++
				req, err := http.NewRequestWithContext(ctx, http.MethodPut, c.Base+"/v1/sources/ingest-"+strconv.Itoa(source)+"/tools", bytes.NewReader(body.Bytes()))
				if err != nil {
					return err
				}
				req.Header.Set("Content-Type", "application/json")
				return httpop.Do(hc, req, "PUT")
			}},
		}
		for _, o := range ops {
			for _, opts := range c.Levels {
				r, err := bench.Run(ctx, o.name, opts, o.op)
				if err != nil {
					return nil, err
				}
				c.Log.Info("bench ingest", "result", r.String())
				if r.FirstError != nil {
					c.Log.Warn("bench ingest: errors", "first", r.FirstError.Error())
				}
				results = append(results, r)
			}
		}
	}
	return results, nil
}

// Catalog is the searchbench catalog of n tools of seed as catalog tools.
func Catalog(n int, seed uint64) []catalog.Tool {
	var tools []catalog.Tool
	for _, t := range searchbench.Catalog(n, rand.New(rand.NewPCG(seed, uint64(n)))) {
		tools = append(tools, catalog.Tool{Name: t.Name, Description: t.Description, InputSchema: json.RawMessage(t.Schema)})
	}
	return tools
}

// StartEnriching imports a catalog of n tools (other than the timed ones) through q, starts
// rc's workers on its enrichment (jobs of kind enrichKind), and returns once they have
// enriched some of it: the imports that follow run against a server that is enriching, as a
// deployment's first minutes are.
func StartEnriching(ctx context.Context, log *slog.Logger, pool *pgxpool.Pool, rc *river.Client[pgx.Tx], q sources.Queue, enrichKind string, n int) error {
	if _, _, err := sources.Import(ctx, pool, q, "enriching", Catalog(n, 7)); err != nil {
		return err
	}
	if err := rc.Start(ctx); err != nil {
		return err
	}
	for {
		counts, err := riverdb.CountJobs(ctx, pool, enrichKind)
		if err != nil {
			return err
		}
		done := 0
		for _, c := range counts {
			if c.State == string(rivertype.JobStateCompleted) {
				done = int(c.Count)
			}
		}
		if done >= min(500, n/2) {
			log.Info("bench ingest: enrichment under way", "tools", n, "enriched", done)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
