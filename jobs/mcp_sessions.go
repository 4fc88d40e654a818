package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/internal/db"
)

// MCPSessionCleanupArgs deletes MCP gateway sessions (and their bound tools) unused for
// longer than the retention period.
type MCPSessionCleanupArgs struct{}

func (MCPSessionCleanupArgs) Kind() string { return "mcp_session_cleanup" }

// InsertOpts collapses enqueues made while one is waiting or running into that one job.
func (MCPSessionCleanupArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: uniqueUnfinished()}
}

const defaultMCPSessionKeep = 7 * 24 * time.Hour

// MCPSessionCleanupWorker works MCPSessionCleanupArgs.
type MCPSessionCleanupWorker struct {
	river.WorkerDefaults[MCPSessionCleanupArgs]
	deps Deps
}

func (w *MCPSessionCleanupWorker) Work(ctx context.Context, job *river.Job[MCPSessionCleanupArgs]) error {
	keep := w.deps.MCPSessionKeep
	if keep <= 0 {
		// Unset (a client built without the setting) must not mean "delete every session".
		keep = defaultMCPSessionKeep
	}
	n, err := db.New(w.deps.Pool).DeleteIdleMCPSessions(ctx, pgtype.Interval{Microseconds: keep.Microseconds(), Valid: true})
	if err != nil {
		return fmt.Errorf("delete idle mcp sessions: %w", err)
	}
	if n > 0 {
		w.deps.Logger.Info("idle mcp sessions deleted", "sessions", n)
	}
	return nil
}
