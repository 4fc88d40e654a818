package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/db"
)

// enrichmentProgressEvery is how often watchEnrichment logs.
const enrichmentProgressEvery = 5 * time.Second

// watchEnrichment logs, every `every`, how far the enrichment of the source called name has
// come: its tools enriched and embedded (a vector in the active profile's set) of all, the
// rate since the watch began and the time left at that rate; then "enrichment done" once
// every tool is embedded, and returns. It returns at once when ctx ends.
func watchEnrichment(ctx context.Context, log *slog.Logger, pool *pgxpool.Pool, name string, every time.Duration) {
	q := db.New(pool)
	start := time.Now()
	first := int64(-1)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		rows, err := q.ListSourceSummaries(ctx, &name)
		if err != nil || len(rows) == 0 {
			if ctx.Err() == nil {
				log.Warn("enrichment progress unavailable", "source", name, "err", err)
			}
			return
		}
		r := rows[0]
		if r.Embedded >= r.Tools {
			if first < 0 {
				log.Info("enrichment done: every tool has its vectors", "source", name, "tools", r.Tools)
			} else {
				log.Info("enrichment done", "source", name, "tools", r.Tools, "seconds", int(time.Since(start).Seconds()))
			}
			return
		}
		args := []any{"source", name, "embedded", r.Embedded, "enriched", r.Enriched, "tools", r.Tools}
		if first < 0 {
			first = r.Embedded
			log.Info("enrichment started: tools are searchable by keyword now, by meaning as they are embedded", args...)
		} else if el := time.Since(start).Seconds(); r.Embedded > first {
			rate := float64(r.Embedded-first) / el
			eta := time.Duration(float64(r.Tools-r.Embedded)/rate) * time.Second
			log.Info("enrichment", append(args, "tools_per_s", int(rate+0.5), "eta", eta.Round(time.Second).String())...)
		} else {
			log.Info("enrichment", args...)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
