package catalog

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

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
	// Changed holds the ids of created and updated tools, in id order: the ones whose
	// enrichment and embeddings must be (re)computed.
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

// SourceDeletedError: the source was deleted while Apply waited to lock it.
type SourceDeletedError struct{ Source string }

func (e *SourceDeletedError) Error() string {
	return fmt.Sprintf("source %q was deleted", e.Source)
}

// Apply makes the stored tools of source equal to tools, by content hash (ScaleMCP
// Algorithm 1): an unchanged hash does nothing, a new or changed tool is written, a stored
// tool missing from tools is deleted. Every change is recorded in tool_revisions with the
// fields it changed. It runs inside tx, so the whole diff lands at once or not at all, and
// takes a per-source lock so that two writers of one source never interleave. tools must be
// validated and their names unique, unless opts.Validate is set.
//
// Apply is set-based: whatever the number of tools it runs at most eleven statements, each
// reading or writing all the rows of one kind, so a sync costs a bounded number of round
// trips and statement-level triggers on tools fire a bounded number of times. The order of
// the statements avoids deadlocks:
//
//  1. the source: its advisory lock (writers of one source queue here), then a KEY SHARE
//     lock on its row, so that a concurrent deletion of the source waits for this
//     transaction (otherwise its cascade could wait for the tool rows locked below while
//     this transaction waits for the source row, which inserting revisions needs);
//  2. every stored tool row about to change or go, locked in id order (the order in which
//     the re-weight job writes vectors, whose foreign keys lock tool rows) before anything
//     is written, so this transaction holds nothing that its writes take (triggers on tools
//     may take locks of their own) while it waits for a tool row;
//  3. the writes: pending revisions superseded, revisions recorded, definitions updated,
//     review states set, gone tools deleted, new tools inserted in name order.
//
// Writers of different sources touch disjoint tool rows: they never wait for each other's
// rows.
func Apply(ctx context.Context, tx pgx.Tx, source db.Source, tools []Tool, opts ApplyOptions) (Result, error) {
	q := db.New(tx)
	var res Result
	if err := q.LockSource(ctx, int32(source.ID)); err != nil {
		return res, fmt.Errorf("lock source: %w", err)
	}
	if _, err := q.LockSourceRow(ctx, source.ID); errors.Is(err, pgx.ErrNoRows) {
		return res, &SourceDeletedError{Source: source.Name}
	} else if err != nil {
		return res, fmt.Errorf("lock source: %w", err)
	}
	stored, err := q.ListToolStates(ctx, source.ID)
	if err != nil {
		return res, fmt.Errorf("list stored tools: %w", err)
	}
	d, err := diff(stored, tools, opts.Validate)
	if err != nil {
		return res, err
	}
	res.Unchanged, res.Invalid = d.unchanged, d.invalid

	if ids := d.lockIDs(); len(ids) > 0 {
		if err := q.LockTools(ctx, ids); err != nil {
			return res, fmt.Errorf("lock changed tools: %w", err)
		}
	}
	var w writes
	for _, s := range d.reinstated {
		// The server serves the approved definition again: held changes are void.
		w.supersede = append(w.supersede, ToolName(source.Name, s.OriginalName))
		w.setState(s.ID, db.ReviewApproved)
	}
	if len(d.changed) > 0 {
		if err := w.change(ctx, q, source, d.changed, opts.Review, &res); err != nil {
			return res, err
		}
	}
	for _, c := range d.created {
		w.record(revision{ToolName(source.Name, c.tool.Name), "created", "", c.hash, &c.tool, presentFields(c.tool), db.RevisionApplied})
	}
	for _, s := range d.gone {
		name := ToolName(source.Name, s.OriginalName)
		w.record(revision{name, "deleted", s.ContentHash, "", nil, nil, db.RevisionApplied})
		if s.ReviewState == db.ReviewPending {
			w.supersede = append(w.supersede, name)
		}
	}

	// A new pending revision must come after the supersede, which would close it.
	if len(w.supersede) > 0 {
		if err := q.SupersedePendingRevisionsOf(ctx, w.supersede); err != nil {
			return res, fmt.Errorf("close held changes: %w", err)
		}
	}
	if len(w.revisions) > 0 {
		p, err := w.revisionParams(source)
		if err != nil {
			return res, err
		}
		if err := q.InsertRevisions(ctx, p); err != nil {
			return res, fmt.Errorf("record revisions: %w", err)
		}
	}
	if len(w.updates.Ids) > 0 {
		if err := q.UpdateToolDefinitions(ctx, w.updates); err != nil {
			return res, fmt.Errorf("update tools: %w", err)
		}
	}
	if len(w.states.Ids) > 0 {
		if err := q.SetToolReviewStates(ctx, w.states); err != nil {
			return res, fmt.Errorf("set review states: %w", err)
		}
	}
	if len(d.gone) > 0 {
		ids := make([]int64, len(d.gone))
		for i, s := range d.gone {
			ids[i] = s.ID
		}
		n, err := q.DeleteToolsByID(ctx, ids)
		if err != nil {
			return res, fmt.Errorf("delete tools: %w", err)
		}
		res.Deleted = int(n)
	}
	if len(d.created) > 0 {
		ids, err := insertTools(ctx, q, source, d.created)
		if err != nil {
			return res, err
		}
		res.Created = len(ids)
		res.Changed = append(res.Changed, ids...)
	}
	slices.Sort(res.Changed)
	return res, nil
}

// listed is a valid listed tool with its content hash.
type listed struct {
	tool Tool
	hash string
}

// changed is a listed tool whose hash differs from its stored one.
type changed struct {
	listed
	old db.ListToolStatesRow
}

// plan is the hash diff of a listing against the stored tools, before anything is written.
type plan struct {
	unchanged  int
	reinstated []db.ListToolStatesRow // unchanged, but hidden by a held change
	changed    []changed
	created    []listed
	gone       []db.ListToolStatesRow
	invalid    []*InvalidToolError
}

// diff compares tools with the stored ones. With validate, invalid tools, repeated names and
// names normalized alike (see admit) are left out into invalid; without, a repeated or
// clashing name is an error (tools were promised valid).
func diff(stored []db.ListToolStatesRow, tools []Tool, validate bool) (plan, error) {
	var p plan
	byName := make(map[string]db.ListToolStatesRow, len(stored))
	for _, s := range stored {
		byName[s.OriginalName] = s
	}
	admitted, seen, err := admit(&p, byName, tools, validate)
	if err != nil {
		return p, err
	}
	for _, l := range admitted {
		old, exists := byName[l.tool.Name]
		switch {
		case exists && old.ContentHash == l.hash:
			p.unchanged++
			if old.ReviewState == db.ReviewPending {
				p.reinstated = append(p.reinstated, old)
			}
		case exists:
			p.changed = append(p.changed, changed{l, old})
		default:
			p.created = append(p.created, l)
		}
	}
	for _, s := range stored {
		if !seen[s.OriginalName] {
			p.gone = append(p.gone, s)
		}
	}
	slices.SortFunc(p.gone, func(a, b db.ListToolStatesRow) int { return cmp.Compare(a.ID, b.ID) })
	return p, nil
}

// admit returns the listed tools that go into the diff, in listing order, and the original
// names the listing holds (a stored tool not among them is gone). With validate, a tool
// whose definition is invalid or whose name is repeated is left out into p.invalid; an
// invalid new definition of a stored tool still counts as listed, so that the stored one
// stays: a bad answer never deletes a tool.
//
// Two originals may normalize to one catalog name (CatalogName). One keeps it, chosen by
// the names alone so that every sync chooses alike: the one stored under it (a sync never
// renames a stored tool), else the one named so verbatim, else the smallest original name.
// With validate the others are left out into p.invalid; without, the clash is an error.
func admit(p *plan, byName map[string]db.ListToolStatesRow, tools []Tool, validate bool) ([]listed, map[string]bool, error) {
	seen := make(map[string]bool, len(tools))
	admitted := make([]listed, 0, len(tools))
	// catalog name → the stored tool keeping it unchanged though its listed definition is
	// invalid: no other tool may take it.
	kept := map[string]string{}
	for _, t := range tools {
		hash := t.Hash()
		old, exists := byName[t.Name]
		switch {
		case validate:
			if !exists || old.ContentHash != hash {
				if err := t.Validate(); err != nil {
					var bad *InvalidToolError
					if !errors.As(err, &bad) {
						bad = &InvalidToolError{Name: t.Name, Reason: err.Error()}
					}
					p.invalid = append(p.invalid, bad)
					seen[t.Name] = true
					if exists {
						kept[CatalogName(t.Name)] = t.Name
					}
					continue
				}
				hash = t.Hash() // Validate may have normalized it
			}
			if seen[t.Name] {
				p.invalid = append(p.invalid, &InvalidToolError{Name: t.Name, Reason: "name repeated in the list"})
				continue
			}
		case seen[t.Name]:
			// Unvalidated tools were promised unique (catalog.Parse rejects repeats); a
			// repeated name would make the writes below ambiguous, so nothing is written.
			return nil, nil, &InvalidToolError{Name: t.Name, Reason: "name repeated in the list"}
		}
		seen[t.Name] = true
		admitted = append(admitted, listed{t, hash})
	}

	rank := func(l listed, catalogName string) int {
		switch _, stored := byName[l.tool.Name]; {
		case stored:
			return 0
		case l.tool.Name == catalogName:
			return 1
		}
		return 2
	}
	best := make(map[string]int, len(admitted)) // catalog name → index in admitted of its holder
	clash := false
	for i, l := range admitted {
		name := CatalogName(l.tool.Name)
		if _, ok := kept[name]; ok {
			clash = true
			continue
		}
		j, taken := best[name]
		if !taken {
			best[name] = i
			continue
		}
		if !validate {
			return nil, nil, &InvalidToolError{Name: l.tool.Name, Reason: fmt.Sprintf("its catalog name %q is also that of %q", name, admitted[j].tool.Name)}
		}
		clash = true
		if ri, rj := rank(l, name), rank(admitted[j], name); ri < rj || (ri == rj && l.tool.Name < admitted[j].tool.Name) {
			best[name] = i
		}
	}
	if !clash {
		return admitted, seen, nil
	}
	out := admitted[:0:0]
	for i, l := range admitted {
		name := CatalogName(l.tool.Name)
		holder, ok := kept[name]
		if !ok {
			j := best[name]
			if j == i {
				out = append(out, l)
				continue
			}
			holder = admitted[j].tool.Name
		}
		p.invalid = append(p.invalid, &InvalidToolError{Name: l.tool.Name,
			Reason: fmt.Sprintf("its catalog name %q is taken by %q", name, holder)})
	}
	return out, seen, nil
}

// lockIDs are the stored tools the plan writes, in id order.
func (p plan) lockIDs() []int64 {
	ids := make([]int64, 0, len(p.reinstated)+len(p.changed)+len(p.gone))
	for _, s := range p.reinstated {
		ids = append(ids, s.ID)
	}
	for _, c := range p.changed {
		ids = append(ids, c.old.ID)
	}
	for _, s := range p.gone {
		ids = append(ids, s.ID)
	}
	slices.Sort(ids)
	return ids
}

// writes collects the rows Apply writes, one statement per kind.
type writes struct {
	supersede []string // tools whose pending revisions are closed
	revisions []revision
	updates   db.UpdateToolDefinitionsParams
	states    db.SetToolReviewStatesParams
}

// revision is a row of tool_revisions; empty hashes and a nil tool stand for NULL.
type revision struct {
	name, action, oldHash, newHash string
	tool                           *Tool
	fields                         []string
	status                         db.RevisionStatus
}

func (w *writes) record(r revision) { w.revisions = append(w.revisions, r) }

func (w *writes) setState(id int64, state db.ReviewState) {
	w.states.Ids = append(w.states.Ids, id)
	w.states.ReviewStates = append(w.states.ReviewStates, string(state))
}

// revisionParams encodes the revisions for InsertRevisions.
func (w *writes) revisionParams(source db.Source) (db.InsertRevisionsParams, error) {
	p := db.InsertRevisionsParams{SourceID: source.ID}
	for _, r := range w.revisions {
		var def []byte
		if r.tool != nil {
			var err error
			if def, err = json.Marshal(r.tool); err != nil {
				return p, fmt.Errorf("record revision of %s: %w", r.name, err)
			}
		}
		p.ToolNames = append(p.ToolNames, r.name)
		p.Actions = append(p.Actions, r.action)
		p.OldHashes = append(p.OldHashes, r.oldHash)
		p.NewHashes = append(p.NewHashes, r.newHash)
		p.ChangedFields = append(p.ChangedFields, strings.Join(r.fields, ","))
		p.Definitions = append(p.Definitions, string(def))
		p.Statuses = append(p.Statuses, string(r.status))
	}
	return p, nil
}

// change decides, for stored tools whose listed definition changed, between applying the
// new definition and holding it for review (opts.Review), reading the stored definitions
// (for the changed fields) and the held changes in one query.
func (w *writes) change(ctx context.Context, q *db.Queries, source db.Source, cs []changed, review bool, res *Result) error {
	ids := make([]int64, len(cs))
	hashes := make([]string, len(cs))
	for i, c := range cs {
		ids[i], hashes[i] = c.old.ID, c.hash
	}
	rows, err := q.ListChangedTools(ctx, db.ListChangedToolsParams{Ids: ids, NewHashes: hashes, Review: review})
	if err != nil {
		return fmt.Errorf("read changed tools: %w", err)
	}
	byID := make(map[int64]db.ListChangedToolsRow, len(rows))
	for _, r := range rows {
		byID[r.ID] = r
	}
	for _, c := range cs {
		row, ok := byID[c.old.ID]
		if !ok {
			return fmt.Errorf("read changed tools: %s is gone", c.tool.Name)
		}
		name := ToolName(source.Name, c.tool.Name)
		if review {
			res.Pending++
			switch {
			case row.Held:
				// This change is held already (pending, or rejected by an admin): it is not
				// stored again, and the tool stays hidden.
				if c.old.ReviewState != db.ReviewPending {
					w.setState(c.old.ID, db.ReviewPending)
				}
			default:
				// An older pending change is superseded by this one.
				w.supersede = append(w.supersede, name)
				w.record(revision{name, "updated", c.old.ContentHash, c.hash, &c.tool, ChangedFields(storedTool(row), c.tool), db.RevisionPending})
				w.setState(c.old.ID, db.ReviewPending)
			}
			continue
		}
		if c.old.ReviewState == db.ReviewPending {
			w.supersede = append(w.supersede, name)
		}
		w.record(revision{name, "updated", c.old.ContentHash, c.hash, &c.tool, ChangedFields(storedTool(row), c.tool), db.RevisionApplied})
		u := &w.updates
		u.Ids = append(u.Ids, c.old.ID)
		u.Titles = append(u.Titles, c.tool.Title)
		u.Descriptions = append(u.Descriptions, c.tool.Description)
		u.InputSchemas = append(u.InputSchemas, string(c.tool.InputSchema))
		u.OutputSchemas = append(u.OutputSchemas, string(c.tool.OutputSchema))
		u.Annotations = append(u.Annotations, string(c.tool.Annotations))
		u.ContentHashes = append(u.ContentHashes, c.hash)
		res.Updated++
		res.Changed = append(res.Changed, c.old.ID)
	}
	return nil
}

// insertTools inserts the new tools in name order and returns their ids.
func insertTools(ctx context.Context, q *db.Queries, source db.Source, created []listed) ([]int64, error) {
	created = slices.Clone(created)
	slices.SortFunc(created, func(a, b listed) int { return strings.Compare(a.tool.Name, b.tool.Name) })
	p := db.InsertToolsParams{SourceID: source.ID}
	for _, c := range created {
		t := c.tool
		p.Names = append(p.Names, ToolName(source.Name, t.Name))
		p.OriginalNames = append(p.OriginalNames, t.Name)
		p.Titles = append(p.Titles, t.Title)
		p.Descriptions = append(p.Descriptions, t.Description)
		p.InputSchemas = append(p.InputSchemas, string(t.InputSchema))
		p.OutputSchemas = append(p.OutputSchemas, string(t.OutputSchema))
		p.Annotations = append(p.Annotations, string(t.Annotations))
		p.ContentHashes = append(p.ContentHashes, c.hash)
	}
	rows, err := q.InsertTools(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("insert tools: %w", err)
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids, nil
}

// storedTool is the definition of a stored tool.
func storedTool(row db.ListChangedToolsRow) Tool {
	t := Tool{Name: row.OriginalName, Description: row.Description, InputSchema: row.InputSchema,
		OutputSchema: row.OutputSchema, Annotations: row.Annotations}
	if row.Title != nil {
		t.Title = *row.Title
	}
	return t
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
