package sources

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/derrors"
	"github.com/toolgate/toolgate/internal/lexical"
)

// SourceKindError is returned when a catalog is pushed to a source that is not a catalog
// source (an MCP source's tools come from its server only).
type SourceKindError struct {
	Source string
	Kind   db.SourceKind
}

func (e *SourceKindError) Error() string {
	return fmt.Sprintf("source %q is of kind %s; only catalog sources accept pushed tools", e.Source, e.Kind)
}

func (e *SourceKindError) Is(target error) bool { return target == derrors.Conflict }
func (e *SourceKindError) Code() string         { return "wrong_source_kind" }

// Import makes the tools of the catalog source called name equal to tools, creating the
// source when it does not exist (`toolgate import`, PUT /v1/sources/{name}/tools). The diff,
// its sync record and the follow-up jobs for changed tools commit in one transaction: on
// any error nothing is written.
func Import(ctx context.Context, pool *pgxpool.Pool, queue Queue, name string, tools []catalog.Tool) (db.Source, catalog.Result, error) {
	var (
		src db.Source
		res catalog.Result
	)
	if !catalog.ValidSourceName(name) {
		return src, res, &catalog.InvalidToolError{Reason: fmt.Sprintf("source name %q: want 1-32 characters of a-z 0-9 and -, the first not -", name)}
	}
	for i := range tools {
		if err := tools[i].Validate(); err != nil {
			return src, res, err
		}
	}
	started := time.Now()
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		var err error
		src, err = q.EnsureCatalogSource(ctx, name)
		if err != nil {
			return err
		}
		if src.Kind != db.SourceCatalog {
			return &SourceKindError{Source: name, Kind: src.Kind}
		}
		res, err = catalog.Apply(ctx, tx, src, tools, catalog.ApplyOptions{})
		if err != nil {
			return err
		}
		if err := queue.EnrichTx(ctx, tx, res.Changed); err != nil {
			return err
		}
		_, err = q.InsertFinishedSyncRun(ctx, db.InsertFinishedSyncRunParams{
			SourceID: src.ID, State: db.SyncSucceeded, Created: int32(res.Created), Updated: int32(res.Updated),
			Deleted: int32(res.Deleted), Unchanged: int32(res.Unchanged), Skipped: []byte("[]"), StartedAt: started,
		})
		return err
	})
	if err != nil {
		return src, res, err
	}
	// After the commit, outside the catalog's locks: the written tools are searchable by
	// name and description when this returns; the index's upkeep is the lexical_index
	// job's (lexical.Index). A caller that goes away (an HTTP client hanging up) does not
	// stop it halfway: the catalog is stored either way.
	if _, err := lexical.Index(context.WithoutCancel(ctx), pool); err != nil {
		return src, res, fmt.Errorf("catalog stored, lexical index not updated yet: %w", err)
	}
	return src, res, nil
}
