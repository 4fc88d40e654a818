package sources

import (
	"context"
	"slices"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/db"
)

// ToolQuery asks for one page of the catalog's tools (ListTools).
type ToolQuery struct {
	// Source limits the page to one source's tools, in the order of their original names;
	// empty lists every source's tools in name order.
	Source string
	// Visible are the sources the caller may see; nil means every source. A source
	// outside them is not found.
	Visible []string
	// ReviewState keeps only the tools in that state; empty keeps all.
	ReviewState db.ReviewState
	// Q keeps only the tools whose name contains it, in any case; empty keeps all.
	Q string
	// After is the Next of the previous page; empty starts at the first tool.
	After string
	Limit int
}

// ToolPage is one page of tools; Next continues after it, empty on the last page.
type ToolPage struct {
	Tools []db.ListToolsRow
	Next  string
}

// ListTools returns a page of the catalog's tools, each page read along an index (a
// keyset page, sql/queries/listings.sql): the cost of a page does not grow with the
// catalog or with how far the caller has paged. Next is the sort key of the page's last
// tool (its name, or with a source its original name): opaque to callers.
func ListTools(ctx context.Context, pool *pgxpool.Pool, tq ToolQuery) (ToolPage, error) {
	q := db.New(pool)
	var reviewState, text *string
	if tq.ReviewState != "" {
		reviewState = (*string)(&tq.ReviewState)
	}
	if tq.Q != "" {
		text = &tq.Q
	}
	var page ToolPage
	if tq.Source == "" {
		rows, err := q.ListTools(ctx, db.ListToolsParams{After: tq.After, Sources: tq.Visible, ReviewState: reviewState,
			Q: text, Lim: int32(tq.Limit)})
		if err != nil {
			return page, err
		}
		page.Tools = rows
		if len(rows) == tq.Limit {
			page.Next = rows[len(rows)-1].Name
		}
		return page, nil
	}
	if tq.Visible != nil && !slices.Contains(tq.Visible, tq.Source) {
		return page, &SourceNotFoundError{Name: tq.Source}
	}
	src, err := ByName(ctx, q, tq.Source)
	if err != nil {
		return page, err
	}
	rows, err := q.ListSourceTools(ctx, db.ListSourceToolsParams{SourceID: src.ID, After: tq.After,
		ReviewState: reviewState, Q: text, Lim: int32(tq.Limit)})
	if err != nil {
		return page, err
	}
	page.Tools = make([]db.ListToolsRow, len(rows))
	for i, r := range rows {
		page.Tools[i] = db.ListToolsRow(r)
	}
	if len(rows) == tq.Limit {
		page.Next = rows[len(rows)-1].OriginalName
	}
	return page, nil
}

// Runs returns the sync runs of the source called name, newest first, at most limit,
// before the run of id before (0: from the newest).
func Runs(ctx context.Context, pool *pgxpool.Pool, name string, before int64, limit int) (db.Source, []db.SyncRun, error) {
	q := db.New(pool)
	src, err := ByName(ctx, q, name)
	if err != nil {
		return src, nil, err
	}
	runs, err := q.ListSyncRuns(ctx, db.ListSyncRunsParams{SourceID: src.ID, Before: pgtype.Int8{Int64: before, Valid: before > 0},
		Lim: int32(limit)})
	return src, runs, err
}
