package enrich

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
)

// ToolState is a stored tool with what enrichment made of it (GET /v1/tools/{name}).
type ToolState struct {
	Tool db.Tool
	// Steps are the stored enrichment outputs, of the current definition or older ones.
	Steps []db.ToolEnrichment
	// HasVector: the tool has a vector in the active profile's current set.
	HasVector  bool
	Components []db.ListToolComponentViewsRow
}

// LoadTool reads the tool called name and its enrichment state: a
// *catalog.ToolNotFoundError when there is no such tool.
func LoadTool(ctx context.Context, pool *pgxpool.Pool, name string) (ToolState, error) {
	var st ToolState
	q := db.New(pool)
	t, err := q.GetToolByName(ctx, name)
	if errors.Is(err, pgx.ErrNoRows) {
		return st, &catalog.ToolNotFoundError{Name: name}
	}
	if err != nil {
		return st, err
	}
	st.Tool = t
	if st.Steps, err = q.ListToolEnrichments(ctx, t.ID); err != nil {
		return st, err
	}
	if st.HasVector, err = q.ToolHasActiveVector(ctx, t.ID); err != nil {
		return st, err
	}
	if st.Components, err = q.ListToolComponentViews(ctx, t.ID); err != nil {
		return st, err
	}
	return st, nil
}
