// Package sources keeps each source's tools equal to what the source says they are
// (ScaleMCP Algorithm 1): a pushed catalog is imported (Import), an MCP server is listed and
// synced (Sync), and a change held for review is approved or rejected (Approve, Reject).
// Every one of them applies its diff with catalog.Apply, in one transaction with the
// enrichment jobs of the changed tools and the sync record, then flushes the lexical index
// so that the tools are searchable as they now are when it returns.
package sources

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Queue queues the follow-up work of a catalog write inside the writer's transaction, so
// that it exists if and only if the write commits. Package jobs implements it (jobs.Queue).
type Queue interface {
	// EnrichTx queues, inside tx, the enrichment of the given tools' current definitions.
	EnrichTx(ctx context.Context, tx pgx.Tx, toolIDs []int64) error
}
