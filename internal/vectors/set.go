package vectors

import (
	"context"
	"fmt"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/tdwa"
)

// StoredRow is a stored component vector as the re-weight's reads return it, ordered by
// tool.
type StoredRow interface {
	db.ListComponentVectorsRow | db.ListComponentVectorsMissingFromSetRow
}

// FillSet writes into set setID the vector under prof of every tool of rows, keeping a
// vector the set already holds for a tool: one written meanwhile by Write (an enrichment
// that committed after rows were read) is fresher. prof is the set's own weights, which the
// caller has read (a building set is not yet writable through Write's list alone).
// Returns the vectors written or kept.
func FillSet[R StoredRow](ctx context.Context, q *db.Queries, setID int64, prof tdwa.Profile, rows []R) (int, error) {
	vs, err := combineTools(rows, prof)
	if err != nil {
		return 0, err
	}
	params := make([]db.InsertToolVectorParams, len(vs))
	for i, v := range vs {
		params[i] = db.InsertToolVectorParams{SetID: setID, ToolID: v.ToolID, Embedding: v.Embedding}
	}
	if err := db.ExecBatch(q.InsertToolVector(ctx, params)); err != nil {
		return 0, fmt.Errorf("write tool vectors: %w", err)
	}
	return len(vs), nil
}

// ReplaceInSet writes into set setID the vector under prof of every tool of rows,
// replacing what the set holds: rows were read in the caller's transaction, after every
// write of those tools that the set may have missed. A tool deleted meanwhile is skipped.
// Returns the vectors written.
func ReplaceInSet[R StoredRow](ctx context.Context, q *db.Queries, setID int64, prof tdwa.Profile, rows []R) (int, error) {
	vs, err := combineTools(rows, prof)
	if err != nil {
		return 0, err
	}
	params := make([]db.ReplaceToolVectorParams, len(vs))
	for i, v := range vs {
		params[i] = db.ReplaceToolVectorParams{SetID: setID, ToolID: v.ToolID, Embedding: v.Embedding}
	}
	if err := db.ExecBatch(q.ReplaceToolVector(ctx, params)); err != nil {
		return 0, fmt.Errorf("replace tool vectors: %w", err)
	}
	return len(vs), nil
}

// combineTools groups component rows (ordered by tool) by tool and combines each tool's
// components under prof. A tool with none of the kinds the profile uses gets no vector,
// as in Write. The SetID of the results is left to the caller.
func combineTools[R StoredRow](rows []R, prof tdwa.Profile) ([]db.UpsertToolVectorParams, error) {
	var out []db.UpsertToolVectorParams
	var comps []tdwa.Component
	flush := func(toolID int64) error {
		if len(comps) == 0 {
			return nil
		}
		v, ok, err := combine(comps, prof)
		comps = comps[:0]
		if err != nil {
			return fmt.Errorf("tool %d: %w", toolID, err)
		}
		if ok {
			out = append(out, db.UpsertToolVectorParams{ToolID: toolID, Embedding: v})
		}
		return nil
	}
	var cur int64
	for _, r := range rows {
		c := db.ListComponentVectorsRow(r)
		if c.ToolID != cur {
			if err := flush(cur); err != nil {
				return nil, err
			}
			cur = c.ToolID
		}
		comps = append(comps, tdwa.Component{Kind: c.Kind, Ordinal: int(c.Ordinal), Vector: c.Embedding.Slice()})
	}
	if err := flush(cur); err != nil {
		return nil, err
	}
	return out, nil
}
