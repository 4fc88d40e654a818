package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
	// Pending counts changed tools held back for review (ApplyOptions.Review): their new
	// definition waits in tool_revisions, the stored one is kept and hidden from search.
	Pending int `json:"pending"`
	// Changed holds the ids of created and updated tools: the ones whose enrichment and
	// embeddings must be (re)computed.
	Changed []int64 `json:"-"`
	// Invalid holds the tools left out by ApplyOptions.Validate.
	Invalid []*InvalidToolError `json:"-"`
}

// ApplyOptions tunes Apply.
type ApplyOptions struct {
	// Review holds back every change of an existing tool's definition: the change is stored
	// as a pending revision and the tool's review_state becomes 'pending' until an admin
	// approves it. New tools and deletions apply as usual.
	Review bool
	// Validate makes Apply validate the tools itself and leave out (in Result.Invalid)
	// invalid ones and repeated names instead of failing. A tool whose hash equals the
	// stored one is identical to a definition that was valid when stored and is not
	// validated again: that is most of a sync's tools, and validation is the costliest step.
	Validate bool
}

// Review states of a tool and statuses of a revision.
const (
	ReviewApproved = "approved"
	ReviewPending  = "pending"
)

// Apply makes the stored tools of source equal to tools, by content hash (ScaleMCP
// Algorithm 1): an unchanged hash does nothing, a new or changed tool is written, a stored
// tool missing from tools is deleted. Every change is recorded in tool_revisions with the
// fields it changed. It runs inside tx, so the whole diff lands at once or not at all, and
// takes a per-source lock so that two writers of one source never interleave. tools must be
// validated, unless opts.Validate is set.
func Apply(ctx context.Context, tx pgx.Tx, source db.Source, tools []Tool, opts ApplyOptions) (Result, error) {
	q := db.New(tx)
	var res Result
	if err := q.LockSource(ctx, int32(source.ID)); err != nil {
		return res, fmt.Errorf("lock source: %w", err)
	}
	stored, err := q.ListToolStates(ctx, source.ID)
	if err != nil {
		return res, fmt.Errorf("list stored tools: %w", err)
	}
	byName := make(map[string]db.ListToolStatesRow, len(stored))
	for _, s := range stored {
		byName[s.OriginalName] = s
	}
	seen := make(map[string]bool, len(tools))
	for _, t := range tools {
		hash := t.Hash()
		old, exists := byName[t.Name]
		if opts.Validate {
			if !exists || old.ContentHash != hash {
				if err := t.Validate(); err != nil {
					var bad *InvalidToolError
					if !errors.As(err, &bad) {
						bad = &InvalidToolError{Name: t.Name, Reason: err.Error()}
					}
					res.Invalid = append(res.Invalid, bad)
					// An invalid new definition of a stored tool leaves the stored one as
					// it is: a bad answer never deletes a tool.
					seen[t.Name] = true
					continue
				}
				hash = t.Hash() // Validate may have normalized it
			}
			if seen[t.Name] {
				res.Invalid = append(res.Invalid, &InvalidToolError{Name: t.Name, Reason: "name repeated in the list"})
				continue
			}
		}
		seen[t.Name] = true
		name := Namespaced(source.Name, t.Name)
		switch {
		case exists && old.ContentHash == hash:
			res.Unchanged++
			if old.ReviewState == ReviewPending {
				// The server serves the approved definition again: held changes are void.
				if err := reinstate(ctx, q, old.ID, name); err != nil {
					return res, err
				}
			}
		case exists && opts.Review:
			held, err := hold(ctx, q, source, old, t, hash)
			if err != nil {
				return res, err
			}
			if held {
				res.Pending++
			} else {
				res.Unchanged++
			}
		case exists:
			fields, err := changedSince(ctx, q, old.ID, t)
			if err != nil {
				return res, err
			}
			if err := q.UpdateToolDefinition(ctx, db.UpdateToolDefinitionParams{
				ID: old.ID, Title: optional(t.Title), Description: t.Description,
				InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, Annotations: t.Annotations,
				ContentHash: hash, ReviewState: ReviewApproved,
			}); err != nil {
				return res, fmt.Errorf("update %s: %w", t.Name, err)
			}
			if old.ReviewState == ReviewPending {
				if _, err := q.SupersedePendingRevisions(ctx, name); err != nil {
					return res, fmt.Errorf("close held changes of %s: %w", t.Name, err)
				}
			}
			if err := record(ctx, q, source, t.Name, "updated", &old.ContentHash, &hash, &t, fields, "applied"); err != nil {
				return res, err
			}
			res.Updated++
			res.Changed = append(res.Changed, old.ID)
		default:
			id, err := q.InsertTool(ctx, db.InsertToolParams{
				SourceID: source.ID, Name: name, OriginalName: t.Name,
				Title: optional(t.Title), Description: t.Description, InputSchema: t.InputSchema,
				OutputSchema: t.OutputSchema, Annotations: t.Annotations, ContentHash: hash,
				ReviewState: ReviewApproved,
			})
			if err != nil {
				return res, fmt.Errorf("insert %s: %w", t.Name, err)
			}
			if err := record(ctx, q, source, t.Name, "created", nil, &hash, &t, presentFields(t), "applied"); err != nil {
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
			if err := record(ctx, q, source, s.OriginalName, "deleted", &s.ContentHash, nil, nil, []string{}, "applied"); err != nil {
				return res, err
			}
			if s.ReviewState == ReviewPending {
				if _, err := q.SupersedePendingRevisions(ctx, Namespaced(source.Name, s.OriginalName)); err != nil {
					return res, fmt.Errorf("close held changes of %s: %w", s.OriginalName, err)
				}
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

// hold stores t as a pending change of the stored tool old and hides the tool. A change
// already held (pending, or rejected by an admin) is not stored again; it reports whether
// the tool is held back.
func hold(ctx context.Context, q *db.Queries, source db.Source, old db.ListToolStatesRow, t Tool, hash string) (bool, error) {
	name := Namespaced(source.Name, t.Name)
	_, err := q.FindHeldRevision(ctx, db.FindHeldRevisionParams{ToolName: name, OldHash: &old.ContentHash, NewHash: &hash})
	switch {
	case err == nil:
		if old.ReviewState != ReviewPending {
			if err := q.SetToolReviewState(ctx, db.SetToolReviewStateParams{ID: old.ID, ReviewState: ReviewPending}); err != nil {
				return false, fmt.Errorf("hide %s: %w", t.Name, err)
			}
		}
		return true, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return false, fmt.Errorf("find held change of %s: %w", t.Name, err)
	}
	fields, err := changedSince(ctx, q, old.ID, t)
	if err != nil {
		return false, err
	}
	// An older pending change is superseded by this one.
	if _, err := q.SupersedePendingRevisions(ctx, name); err != nil {
		return false, fmt.Errorf("close held changes of %s: %w", t.Name, err)
	}
	if err := record(ctx, q, source, t.Name, "updated", &old.ContentHash, &hash, &t, fields, ReviewPending); err != nil {
		return false, err
	}
	if err := q.SetToolReviewState(ctx, db.SetToolReviewStateParams{ID: old.ID, ReviewState: ReviewPending}); err != nil {
		return false, fmt.Errorf("hide %s: %w", t.Name, err)
	}
	return true, nil
}

// reinstate makes a held tool visible again and voids its pending changes.
func reinstate(ctx context.Context, q *db.Queries, id int64, name string) error {
	if _, err := q.SupersedePendingRevisions(ctx, name); err != nil {
		return fmt.Errorf("close held changes of %s: %w", name, err)
	}
	if err := q.SetToolReviewState(ctx, db.SetToolReviewStateParams{ID: id, ReviewState: ReviewApproved}); err != nil {
		return fmt.Errorf("reinstate %s: %w", name, err)
	}
	return nil
}

// changedSince lists the fields of t that differ from the stored tool id.
func changedSince(ctx context.Context, q *db.Queries, id int64, t Tool) ([]string, error) {
	row, err := q.GetToolDefinitionByID(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("read stored %s: %w", t.Name, err)
	}
	old := Tool{Name: row.OriginalName, Description: row.Description, InputSchema: row.InputSchema,
		OutputSchema: row.OutputSchema, Annotations: row.Annotations}
	if row.Title != nil {
		old.Title = *row.Title
	}
	return ChangedFields(old, t), nil
}

// ChangedFields names the parts of the definition that differ between a and b, compared
// canonically: title, description, input_schema, output_schema, annotations.
func ChangedFields(a, b Tool) []string {
	fields := []string{}
	if a.Title != b.Title {
		fields = append(fields, "title")
	}
	if a.Description != b.Description {
		fields = append(fields, "description")
	}
	for _, f := range []struct {
		name string
		a, b json.RawMessage
	}{
		{"input_schema", a.InputSchema, b.InputSchema},
		{"output_schema", a.OutputSchema, b.OutputSchema},
		{"annotations", a.Annotations, b.Annotations},
	} {
		if !sameJSON(f.a, f.b) {
			fields = append(fields, f.name)
		}
	}
	return fields
}

// presentFields names the parts a new definition has.
func presentFields(t Tool) []string {
	fields := []string{}
	if t.Title != "" {
		fields = append(fields, "title")
	}
	fields = append(fields, "description", "input_schema")
	if len(t.OutputSchema) > 0 {
		fields = append(fields, "output_schema")
	}
	if len(t.Annotations) > 0 {
		fields = append(fields, "annotations")
	}
	return fields
}

func sameJSON(a, b json.RawMessage) bool {
	ca, errA := Canonical(a)
	cb, errB := Canonical(b)
	if errA != nil || errB != nil { // absent (or null) on either side
		return (errA != nil) == (errB != nil)
	}
	return bytes.Equal(ca, cb)
}

func record(ctx context.Context, q *db.Queries, source db.Source, name, action string, oldHash, newHash *string, t *Tool, fields []string, status string) error {
	var def json.RawMessage
	if t != nil {
		def, _ = json.Marshal(t)
	}
	err := q.InsertRevision(ctx, db.InsertRevisionParams{
		SourceID: source.ID, ToolName: Namespaced(source.Name, name), Action: action,
		OldHash: oldHash, NewHash: newHash, ChangedFields: fields, Definition: def, Status: status,
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
