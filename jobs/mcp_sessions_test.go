package jobs

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/internal/pgtest"
)

func TestMCPSessionCleanupDeletesOnlyUnusedSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	_, err := pool.Exec(ctx, `
		INSERT INTO mcp_sessions (id, caller, state, last_seen_at) VALUES
		  ('old', 'open', '{}', now() - interval '8 days'),
		  ('recent', 'open', '{}', now() - interval '2 days'),
		  ('unset-keep-old', 'open', '{}', now() - interval '6 days');
		INSERT INTO mcp_session_tools (session_id, tool_name) VALUES ('old', 'a__b'), ('recent', 'a__b')`)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	w := &MCPSessionCleanupWorker{deps: Deps{Pool: pool, Logger: log, MCPSessionKeep: 3 * 24 * time.Hour}}
	// A worker without the setting keeps sessions for the default week.
	unset := &MCPSessionCleanupWorker{deps: Deps{Pool: pool, Logger: log}}
	if err := unset.Work(ctx, &river.Job[MCPSessionCleanupArgs]{}); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM mcp_sessions`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("after default cleanup %d sessions left, want 2 (err %v)", n, err)
	}
	if err := w.Work(ctx, &river.Job[MCPSessionCleanupArgs]{}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	rows, _ := pool.Query(ctx, `SELECT id FROM mcp_sessions`)
	for rows.Next() {
		var id string
		rows.Scan(&id)
		ids = append(ids, id)
	}
	if len(ids) != 1 || ids[0] != "recent" {
		t.Fatalf("sessions left %v, want [recent]", ids)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM mcp_session_tools`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("bindings left %d, want 1", n)
	}
}
