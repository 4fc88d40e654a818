package catalog

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/internal/db"
)

// Result is what applying a tool list to a source's stored catalog did.
type Result struct {
	Created   int `json:"created"`
	Updated   int `json:"updated"`
	Deleted   int `json:"deleted"`
	Unchanged int `json:"unchanged"`
	// Changed holds the ids of created and updated tools: the ones whose enrichment and
	// embeddings must be (re)computed.
	Changed []int64 `json:"-"`
}

// Apply makes the stored tools of source equal to tools, by content hash (ScaleMCP
// Algorithm 1): an unchanged hash does nothing, a new or changed tool is written, a stored
// tool missing from tools is deleted. Every change is recorded in tool_revisions. It runs
// inside tx, so the whole diff lands at once or not at all, and takes a per-source lock
// so that two writers of one source never interleave. tools must be validated.
func Apply(ctx context.Context, tx pgx.Tx, source db.Source, tools []Tool) (Result, error) {
	q := db.New(tx)
	var res Result
	if err := q.LockSource(ctx, int32(source.ID)); err != nil {
		return res, fmt.Errorf("lock source: %w", err)
	}
	stored, err := q.ListToolHashes(ctx, source.ID)
	if err != nil {
		return res, fmt.Errorf("list stored tools: %w", err)
	}
	byName := make(map[string]db.ListToolHashesRow, len(stored))
	for _, s := range stored {
		byName[s.OriginalName] = s
	}
	seen := make(map[string]bool, len(tools))
	for _, t := range tools {
		seen[t.Name] = true
		hash := t.Hash()
		old, exists := byName[t.Name]
		switch {
		case exists && old.ContentHash == hash:
			res.Unchanged++
		case exists:
			if err := q.UpdateToolDefinition(ctx, db.UpdateToolDefinitionParams{
				ID: old.ID, Title: optional(t.Title), Description: t.Description,
				InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, Annotations: t.Annotations,
				ContentHash: hash, ReviewState: "approved",
			}); err != nil {
				return res, fmt.Errorf("update %s: %w", t.Name, err)
			}
			if err := record(ctx, q, source, t.Name, "updated", &old.ContentHash, &hash, &t); err != nil {
				return res, err
			}
			res.Updated++
			res.Changed = append(res.Changed, old.ID)
		default:
			id, err := q.InsertTool(ctx, db.InsertToolParams{
				SourceID: source.ID, Name: Namespaced(source.Name, t.Name), OriginalName: t.Name,
				Title: optional(t.Title), Description: t.Description, InputSchema: t.InputSchema,
				OutputSchema: t.OutputSchema, Annotations: t.Annotations, ContentHash: hash,
				ReviewState: "approved",
			})
			if err != nil {
				return res, fmt.Errorf("insert %s: %w", t.Name, err)
			}
			if err := record(ctx, q, source, t.Name, "created", nil, &hash, &t); err != nil {
				return res, err
			}
			res.Created++
			res.Changed = append(res.Changed, id)
		}
	}
	var gone []int64
	for _, s := range stored {
		if !seen[s.OriginalName] {
			gone = append(gone, s.ID)
			if err := record(ctx, q, source, s.OriginalName, "deleted", &s.ContentHash, nil, nil); err != nil {
				return res, err
			}
		}
	}
	if len(gone) > 0 {
		n, err := q.DeleteToolsByID(ctx, gone)
		if err != nil {
			return res, fmt.Errorf("delete tools: %w", err)
		}
		res.Deleted = int(n)
	}
	return res, nil
}

func record(ctx context.Context, q *db.Queries, source db.Source, name, action string, oldHash, newHash *string, t *Tool) error {
	var def json.RawMessage
	if t != nil {
		def, _ = json.Marshal(t)
	}
	err := q.InsertRevision(ctx, db.InsertRevisionParams{
		SourceID: source.ID, ToolName: Namespaced(source.Name, name), Action: action,
		OldHash: oldHash, NewHash: newHash, ChangedFields: []string{}, Definition: def, Status: "applied",
	})
	if err != nil {
		return fmt.Errorf("record revision of %s: %w", name, err)
	}
	return nil
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
