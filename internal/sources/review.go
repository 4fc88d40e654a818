package sources

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/derrors"
	"github.com/toolgate/toolgate/internal/lexical"
)

// NothingToReviewError: the tool has no held change to approve or reject.
type NothingToReviewError struct{ Tool string }

func (e *NothingToReviewError) Error() string {
	return fmt.Sprintf("tool %q has no held change to decide", e.Tool)
}

func (e *NothingToReviewError) Is(target error) bool { return target == derrors.Conflict }
func (e *NothingToReviewError) Code() string         { return "nothing_to_review" }

// Approve applies the newest held change of a tool (pending, or rejected earlier),
// makes the tool visible to search again and queues its enrichment, in one transaction.
func Approve(ctx context.Context, pool *pgxpool.Pool, queue Queue, name string) (db.Tool, error) {
	var out db.Tool
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		tool, rev, err := heldChange(ctx, q, name)
		if err != nil {
			return err
		}
		var t catalog.Tool
		if err := json.Unmarshal(rev.Definition, &t); err != nil {
			return fmt.Errorf("held definition of %s: %w", name, err)
		}
		if err := t.Validate(); err != nil {
			return err
		}
		var title *string
		if t.Title != "" {
			title = &t.Title
		}
		if err := q.UpdateToolDefinition(ctx, db.UpdateToolDefinitionParams{
			ID: tool.ID, Title: title, Description: t.Description, InputSchema: t.InputSchema,
			OutputSchema: t.OutputSchema, Annotations: t.Annotations, ContentHash: t.Hash(), ReviewState: db.ReviewApproved,
		}); err != nil {
			return err
		}
		if err := q.DecideRevision(ctx, db.DecideRevisionParams{ID: rev.ID, Status: db.RevisionApproved}); err != nil {
			return err
		}
		if _, err := q.SupersedePendingRevisions(ctx, name); err != nil {
			return err
		}
		if err := queue.EnrichTx(ctx, tx, []int64{tool.ID}); err != nil {
			return err
		}
		out, err = toolByName(ctx, q, name)
		return err
	})
	if err != nil {
		return out, err
	}
	if _, err := lexical.Flush(context.WithoutCancel(ctx), pool); err != nil {
		return out, fmt.Errorf("change approved, lexical index not updated yet: %w", err)
	}
	return out, nil
}

// Reject rejects a tool's pending change. The tool keeps its old definition and stays
// hidden from search (its server serves something else) until the server serves the
// approved definition again or an admin approves the change after all.
func Reject(ctx context.Context, pool *pgxpool.Pool, name string) (db.Tool, error) {
	var out db.Tool
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		tool, rev, err := heldChange(ctx, q, name)
		if err != nil {
			return err
		}
		if rev.Status != db.RevisionPending {
			return &NothingToReviewError{Tool: name}
		}
		if err := q.DecideRevision(ctx, db.DecideRevisionParams{ID: rev.ID, Status: db.RevisionRejected}); err != nil {
			return err
		}
		out = tool
		return nil
	})
	return out, err
}

// heldChange locks the tool's source and returns the tool with its newest held change.
func heldChange(ctx context.Context, q *db.Queries, name string) (db.Tool, db.ToolRevision, error) {
	tool, err := toolByName(ctx, q, name)
	if err != nil {
		return tool, db.ToolRevision{}, err
	}
	if err := q.LockSource(ctx, int32(tool.SourceID)); err != nil {
		return tool, db.ToolRevision{}, err
	}
	// Re-read under the lock: a sync may have changed it meanwhile.
	if tool, err = toolByName(ctx, q, name); err != nil {
		return tool, db.ToolRevision{}, err
	}
	rev, err := q.LatestHeldRevision(ctx, db.LatestHeldRevisionParams{ToolName: name, OldHash: &tool.ContentHash})
	if errors.Is(err, pgx.ErrNoRows) {
		return tool, rev, &NothingToReviewError{Tool: name}
	}
	return tool, rev, err
}

// toolByName reads the tool called name: a *catalog.ToolNotFoundError when there is none.
func toolByName(ctx context.Context, q *db.Queries, name string) (db.Tool, error) {
	tool, err := q.GetToolByName(ctx, name)
	if errors.Is(err, pgx.ErrNoRows) {
		return tool, &catalog.ToolNotFoundError{Name: name}
	}
	return tool, err
}

// NoHistoryError: no tool of that name exists and no definition change of one is stored.
type NoHistoryError struct{ Name string }

func (e *NoHistoryError) Error() string        { return fmt.Sprintf("tool %q has no history", e.Name) }
func (e *NoHistoryError) Is(target error) bool { return target == derrors.NotFound }

// History lists the definition changes of the tool called name, newest first, at most
// limit. History outlives the tool: a deleted tool's is still listed. A tool without stored
// changes has an empty history; a name with neither a tool nor a change is a
// *NoHistoryError.
func History(ctx context.Context, pool *pgxpool.Pool, name string, limit int) ([]db.ToolRevision, error) {
	revs, err := db.New(pool).ToolHistory(ctx, db.ToolHistoryParams{ToolName: name, Limit: int32(limit)})
	if err != nil {
		return nil, err
	}
	if len(revs) > 0 {
		return revs, nil
	}
	if _, err := db.New(pool).GetToolByName(ctx, name); errors.Is(err, pgx.ErrNoRows) {
		return nil, &NoHistoryError{Name: name}
	} else if err != nil {
		return nil, err
	}
	return revs, nil
}

// SetToolEnabled switches the tool called name on or off (a disabled tool is never
// returned by search) and flushes the lexical index: a *catalog.ToolNotFoundError when
// there is no such tool.
func SetToolEnabled(ctx context.Context, pool *pgxpool.Pool, name string, enabled bool) (db.SetToolEnabledRow, error) {
	row, err := db.New(pool).SetToolEnabled(ctx, db.SetToolEnabledParams{Enabled: enabled, Name: name})
	if errors.Is(err, pgx.ErrNoRows) {
		return row, &catalog.ToolNotFoundError{Name: name}
	}
	if err != nil {
		return row, err
	}
	// A caller that goes away does not stop it: the switch is stored either way.
	if _, err := lexical.Flush(context.WithoutCancel(ctx), pool); err != nil {
		return row, err
	}
	return row, nil
}
