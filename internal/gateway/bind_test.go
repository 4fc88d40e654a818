package gateway

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/pgtest"
)

// TestBindKeepsTheBestRanked: of one find_tools answer longer than the bind limit, the
// best-ranked tools stay bound and the worst are dropped.
func TestBindKeepsTheBestRanked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	q := db.New(pool)
	if err := q.EnsureMCPSession(ctx, db.EnsureMCPSessionParams{ID: "s1", Caller: "open"}); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 50) // best first
	for i := range names {
		names[i] = fmt.Sprintf("t%02d", i+1)
	}
	if err := q.BindSessionTools(ctx, db.BindSessionToolsParams{SessionID: "s1", Names: names}); err != nil {
		t.Fatal(err)
	}
	if err := q.TrimSessionTools(ctx, db.TrimSessionToolsParams{SessionID: "s1", Keep: 32}); err != nil {
		t.Fatal(err)
	}
	rows, _ := pool.Query(ctx, `SELECT tool_name FROM mcp_session_tools WHERE session_id = 's1' ORDER BY tool_name`)
	kept, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(kept, names[:32]) {
		t.Errorf("kept %v, want the 32 best %v", kept, names[:32])
	}
}
