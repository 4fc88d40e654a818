package search_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// A SQL function the planner does not inline is planned again on every execution of the
// statement that calls it, however long that statement's own plan is cached: each such
// call cost a search 0.05–0.3 ms (more than a search of words no tool has spends in its
// statement). So the statements a search runs call SQL functions only where they inline,
// and PL/pgSQL, whose plans a session keeps, for the rest. PostgreSQL's function
// statistics (track_functions = all) count exactly the calls that were not inlined.
func TestSearchCallsOnlyInlinedSQLFunctions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	testfactory.Catalog(ctx, t, pool, "demo", dataset.Tools(dataset.DemoCompanies[:2]), nil)
	flush(t, pool)

	cfg := pool.Config().Copy()
	cfg.MaxConns, cfg.MinConns = 1, 0
	cfg.ConnConfig.RuntimeParams["track_functions"] = "all"
	tracked, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tracked.Close()
	st := search.DefaultSettings()
	st.VectorConfidence, st.WeightMeaning = search.DefaultVectorConfidence, search.DefaultWeightMeaning
	svc := search.New(tracked, embed.NewLocal(384), st, discard())
	for _, r := range []search.Request{
		{Query: "stock price history", Mode: search.ModeHybrid, K: 5},
		{Query: "quarterly revenue and then the stock price", Mode: search.ModeHybrid, K: 5, Explain: true},
		{Query: "zqxjv wxqkz", Mode: search.ModeLexical, K: 5},
	} {
		mustSearch(t, ctx, svc, r)
	}

	// One connection: the counts of the searches' backend, flushed to the statistics when
	// it goes idle after pg_stat_force_next_flush, then read by the same backend.
	type call struct {
		Name, Language string
		Calls          int64
	}
	var calls []call
	if err := tracked.AcquireFunc(ctx, func(c *pgxpool.Conn) error {
		if _, err := c.Exec(ctx, `SELECT pg_stat_force_next_flush()`); err != nil {
			return err
		}
		if _, err := c.Exec(ctx, `SELECT pg_stat_clear_snapshot()`); err != nil {
			return err
		}
		rows, err := c.Query(ctx, `SELECT f.funcname::text, l.lanname::text, f.calls
			FROM pg_stat_user_functions f
			JOIN pg_proc p ON p.oid = f.funcid
			JOIN pg_language l ON l.oid = p.prolang
			ORDER BY 1`)
		if err != nil {
			return err
		}
		calls, err = pgx.CollectRows(rows, pgx.RowToStructByPos[call])
		return err
	}); err != nil {
		t.Fatal(err)
	}
	counted := false
	for _, c := range calls {
		if c.Language == "sql" {
			t.Errorf("SQL function %s was called %d times, not inlined: planned on every search", c.Name, c.Calls)
		}
		counted = counted || c.Name == "toolgate_with_synonyms"
	}
	if !counted {
		t.Fatalf("no call of toolgate_with_synonyms counted: the statistics were not flushed (%v)", calls)
	}
}
