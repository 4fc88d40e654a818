package vectors

import (
	"context"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/tdwa"
)

// Space is an embedding space (embedding_space: the model and the dimension). Only the
// stored component vectors it made count: after a switch of space the old ones are
// cleared, and a component without a vector of the space waits for its enrichment.
type Space struct {
	Model string
	Dims  int
}

// Vectors indexes the component vectors of stored that the space made by their text's
// hash: a text is embedded once, whatever kind or ordinal it moves to.
func (sp Space) Vectors(stored []db.ToolComponent) map[string][]float32 {
	out := map[string][]float32{}
	for _, c := range stored {
		if c.Embedding != nil && c.Model != nil && *c.Model == sp.Model && len(c.Embedding.Slice()) == sp.Dims {
			out[c.TextHash] = c.Embedding.Slice()
		}
	}
	return out
}

// Recombine writes the tool's vector (Write) from its components stored now, read by the
// caller under the tool's lock, with those of kind replaced by with: the way to change one
// kind of a tool's components (its observed queries) without embedding the others again.
// A tool any of whose other components lacks a vector of the space (not yet enriched, or
// waiting for its re-embedding), or that has no other component, gets no vector here: its
// enrich_tool job writes them. Returns the vectors written.
func Recombine(ctx context.Context, q *db.Queries, toolID int64, now []db.ToolComponent, sp Space, kind string, with []tdwa.Component) (int, error) {
	have := sp.Vectors(now)
	var comps []tdwa.Component
	for _, c := range now {
		if c.Kind == kind {
			continue
		}
		v, ok := have[c.TextHash]
		if !ok {
			return 0, nil
		}
		comps = append(comps, tdwa.Component{Kind: c.Kind, Ordinal: int(c.Ordinal), Vector: v})
	}
	if len(comps) == 0 {
		return 0, nil
	}
	return Write(ctx, q, toolID, append(comps, with...))
}
