package jobs

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/riverdb"
)

// superseding is an enricher whose outputs replace those of earlier versions of itself
// (enrich.Heuristic with a lexicon supersedes heuristic-v1).
type superseding interface {
	Supersedes() []string
}

// RequeueSuperseded queues the enrich_tool job of every tool whose current definition was
// enriched by an earlier version of e (e.Supersedes) and not yet by e, and has no enrich_tool
// job waiting or running: an upgrade of the built-in enricher reaches the existing catalog
// without a change of its tools. The jobs reuse nothing of the old version's outputs but
// cost no provider call (the heuristic enricher's are computed). Running it again, as every
// start of the workers does, queues only what is still missing, so a restart in the middle
// of an upgrade completes it. Returns the number of tools queued.
func RequeueSuperseded(ctx context.Context, pool *pgxpool.Pool, rc *river.Client[pgx.Tx], e enrich.Enricher) (int, error) {
	s, ok := e.(superseding)
	if !ok || len(s.Supersedes()) == 0 {
		return 0, nil
	}
	n := 0
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		ids, err := riverdb.ToolsEnrichedOnlyBy(ctx, tx, s.Supersedes(), e.Model(), EnrichToolArgs{}.Kind())
		if err != nil {
			return err
		}
		n = len(ids)
		return NewQueue(rc).EnrichTx(ctx, tx, ids)
	})
	if err != nil {
		return 0, fmt.Errorf("requeue enrichment of %s: %w", e.Model(), err)
	}
	return n, nil
}
