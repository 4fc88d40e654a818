package enrich

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/tdwa"
	"github.com/toolgate/toolgate/internal/vectors"
)

// ObservedReport is what one SetObserved did.
type ObservedReport struct {
	Skipped  string // "deleted", "unchanged"; empty when something was written
	Embedded int    // texts embedded by the provider
	Vectors  int    // tool vectors written
}

// SetObserved makes the tool's observed components (kind tdwa.KindObserved, ordinals 0..n-1)
// equal to texts, through the path enrichment takes: a text is embedded only when no stored
// component of the tool has a vector for it, and the tool's vector is recombined in every
// ready and building vector set (vectors.Recombine). A list equal to the stored one writes nothing. The
// observed components are written whatever state the rest of the tool is in, but the
// vectors only when every other component has a vector of the current embedding space: a
// tool not yet enriched (or waiting for its re-embedding) gets its vectors from its
// enrich_tool job, which keeps the observed components and combines them too.
func (s *Service) SetObserved(ctx context.Context, toolID int64, texts []string) (ObservedReport, error) {
	var rep ObservedReport
	if s.Embedder == nil {
		return rep, errors.New("observed queries: no embedder configured in this process")
	}
	q := db.New(s.Pool)
	old, err := q.ListToolComponents(ctx, toolID)
	if err != nil {
		return rep, err
	}
	if slices.Equal(observedTexts(old), texts) {
		rep.Skipped = "unchanged"
		return rep, nil
	}
	if len(texts) > 0 {
		if err := s.ensureSpace(ctx); err != nil {
			return rep, err
		}
	}
	want := make([]Component, len(texts))
	for i, t := range texts {
		want[i] = Component{Kind: tdwa.KindObserved, Ordinal: i, Text: t}
	}
	vecs := s.vectorSpace().Vectors(old)
	if rep.Embedded, err = s.embedMissing(ctx, want, vecs); err != nil {
		return rep, err
	}
	err = pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		if err := embed.CheckSpace(ctx, tx, s.Embedder); err != nil {
			return err
		}
		q := db.New(tx)
		if _, err := q.LockToolHash(ctx, toolID); errors.Is(err, pgx.ErrNoRows) {
			rep.Skipped = "deleted"
			return nil
		} else if err != nil {
			return err
		}
		// The tool's other components as they are now, under its lock (an enrichment may
		// have committed since they were read above).
		now, err := q.ListToolComponents(ctx, toolID)
		if err != nil {
			return err
		}
		for k, v := range s.vectorSpace().Vectors(now) {
			vecs[k] = v
		}
		if rep.Vectors, err = vectors.Recombine(ctx, q, toolID, now, s.vectorSpace(), tdwa.KindObserved, tdwaComponents(want, vecs)); err != nil {
			return err
		}
		if err := q.DeleteToolComponentsFrom(ctx, db.DeleteToolComponentsFromParams{
			ToolID: toolID, Kind: tdwa.KindObserved, FromOrdinal: int32(len(want))}); err != nil {
			return err
		}
		if err := q.UpsertToolComponents(ctx, componentParams(toolID, s.Embedder.Model(), want, vecs)); err != nil {
			return fmt.Errorf("write observed components: %w", err)
		}
		return nil
	})
	return rep, err
}

// observedTexts are the texts of the observed components among stored, in ordinal order
// (ListToolComponents orders by kind and ordinal).
func observedTexts(stored []db.ToolComponent) []string {
	out := []string{}
	for _, c := range stored {
		if c.Kind == tdwa.KindObserved {
			out = append(out, c.Text)
		}
	}
	return out
}
