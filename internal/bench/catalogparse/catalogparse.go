// Package catalogparse times parsing and hashing a whole catalog file, the CPU work of every
// sync of a large source before any SQL runs.
package catalogparse

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"

	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/bench/chart"
	"github.com/toolgate/toolgate/internal/catalog"
)

// Run times catalog.Parse, Tool.Hash and both of the catalog data at each level and returns
// the results and, per operation, the tools per second per worker count.
func Run(ctx context.Context, log *slog.Logger, data []byte, levels []bench.Options) ([]bench.Result, []chart.Series, error) {
	tools, err := catalog.Parse(bytes.NewReader(data))
	if err != nil {
		return nil, nil, err
	}
	ops := []struct {
		name string
		op   bench.Op
	}{
		{"parse", func(context.Context, int) error {
			_, err := catalog.Parse(bytes.NewReader(data))
			return err
		}},
		{"hash", func(context.Context, int) error {
			for i := range tools {
				_ = tools[i].Hash()
			}
			return nil
		}},
		{"parse+hash", func(context.Context, int) error {
			ts, err := catalog.Parse(bytes.NewReader(data))
			for i := range ts {
				_ = ts[i].Hash()
			}
			return err
		}},
	}
	var results []bench.Result
	series := make([]chart.Series, len(ops))
	for i, o := range ops {
		series[i].Name = o.name
		for _, opts := range levels {
			name := fmt.Sprintf("%s %d tools (%d KiB)", o.name, len(tools), len(data)>>10)
			r, err := bench.Run(ctx, name, opts, o.op)
			if err != nil {
				return nil, nil, err
			}
			if r.FirstError != nil {
				return nil, nil, fmt.Errorf("%s: %w", name, r.FirstError)
			}
			log.Info("bench catalog", "result", r.String())
			results = append(results, r)
			series[i].X = append(series[i].X, float64(opts.Concurrency))
			series[i].Y = append(series[i].Y, r.Throughput*float64(len(tools)))
		}
	}
	return results, series, nil
}
