package jobs

import (
	"context"
	"testing"

	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/lexicon"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// A catalog enriched by heuristic-v1 is queued again once for the lexicon's version
// (heuristic-v4), not a second time while its jobs wait, and not at all once every tool has
// its outputs.
func TestRequeueSuperseded(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	_, res := testfactory.Catalog(ctx, t, pool, "fin", dataset.Tools(dataset.DemoCompanies[:1])[:3], nil)
	v1 := testfactory.LocalEnricher(pool, 2)
	testfactory.Enrich(ctx, t, v1, res.Changed...)
	rc := insertClient(t, pool)
	current := enrich.Heuristic{Lexicon: lexicon.Builtin}

	if n, err := RequeueSuperseded(ctx, pool, rc, v1.Enricher); err != nil || n != 0 {
		t.Fatalf("heuristic-v1 supersedes nothing: %d, %v", n, err)
	}
	n, err := RequeueSuperseded(ctx, pool, rc, current)
	if err != nil || n != 3 {
		t.Fatalf("queued %d, %v; want the 3 tools", n, err)
	}
	if got := countRows(t, pool, "SELECT count(*) FROM river_job WHERE kind = 'enrich_tool' AND state = 'available'"); got != 3 {
		t.Fatalf("%d enrich_tool jobs available", got)
	}
	if n, err := RequeueSuperseded(ctx, pool, rc, current); err != nil || n != 0 {
		t.Fatalf("queued %d again while the jobs wait, %v", n, err)
	}
	// the jobs run (here: the service they run) and every tool has its outputs
	if _, err := pool.Exec(ctx, "DELETE FROM river_job"); err != nil {
		t.Fatal(err)
	}
	svc := testfactory.LocalEnricher(pool, 2)
	svc.Enricher = current
	testfactory.Enrich(ctx, t, svc, res.Changed...)
	if n, err := RequeueSuperseded(ctx, pool, rc, current); err != nil || n != 0 {
		t.Fatalf("queued %d after the upgrade, %v", n, err)
	}
	if got := countRows(t, pool, "SELECT count(*) FROM tool_components WHERE kind = 'expansion'"); got != 3 {
		t.Fatalf("%d tools have an expansion", got)
	}
}
