// Package observed turns the queries that led agents to a tool into components of that
// tool (kind `observed`), so that the catalog learns the words its users use: opt-in
// (TOOLGATE_OBSERVED_QUERIES, the most kept per tool; 0, the default, collects nothing),
// bounded, de-duplicated, embedded once, weighted by TDWA like the synthetic questions,
// kept within the searching key's sources, and removable per source.
//
// An observed query is shown to every caller (it finds the tool, lexically and by vector),
// so one tenant must neither plant one nor have its own shown: a query counts only once
// MinKeys distinct API keys searched it (TOOLGATE_OBSERVED_MIN_KEYS), or a trusted caller
// did (no key: the operator's; an admin key), and each key counts once in its ranking.
//
// A query is observed when its search is labelled with the tool (search_labels, migration
// 0014: the MCP gateway saw the tool called after the search, or the agent's feedback named
// it). The selection itself is one SQL statement (ObservedQueries in sql/queries/observed.sql);
// the components are written by enrich.Service.SetObserved, the path enrichment takes, and
// the tools' vectors by package vectors, which Forget calls directly (it embeds nothing).
package observed

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/internal/tdwa"
	"github.com/toolgate/toolgate/internal/vectors"
)

const (
	// MaxChars is the longest query kept (in characters, after whitespace is collapsed):
	// a longer one is a whole task pasted in, not the words of a request, and is skipped.
	MaxChars = 200
	// MaxPerTool bounds TOOLGATE_OBSERVED_QUERIES.
	MaxPerTool = 100
	// DefaultMinKeys is TOOLGATE_OBSERVED_MIN_KEYS's default: a query is shown to every
	// caller once three distinct keys asked it (k-anonymity with k = 3: one tenant cannot
	// plant it alone, nor can two colluding ones, and no one key's query is seen by others).
	DefaultMinKeys = 3
	// MaxMinKeys bounds TOOLGATE_OBSERVED_MIN_KEYS.
	MaxMinKeys = 1000
	// sweepMargin is how far before the last sweep's start a sweep looks again: a label's
	// created_at is its transaction's start, so a label committed just after a sweep read
	// the labels may carry an earlier time. Label writes are single short statements
	// (bounded by 5 s in the gateway); refreshing a tool twice costs one query and no
	// embedding.
	sweepMargin = time.Minute
	// defaultSweepBatch is how many tools a sweep refreshes between two records of its
	// progress.
	defaultSweepBatch = 100
)

// Service collects and removes observed queries.
type Service struct {
	Pool *pgxpool.Pool
	// Enrich writes the components of a refresh (its Embedder embeds them); Forget does
	// not need it.
	Enrich *enrich.Service
	// Max is the most observed queries kept per tool (TOOLGATE_OBSERVED_QUERIES); 0 turns
	// collection off (the components already stored stay until removed).
	Max int
	// MinKeys is how many distinct API keys must have searched a query before it is
	// observed (TOOLGATE_OBSERVED_MIN_KEYS); 0 is DefaultMinKeys. Searches without a key and
	// with an admin key are trusted: one of them is enough.
	MinKeys int
	Logger  *slog.Logger

	batch int // tools per batch of a sweep; 0 is defaultSweepBatch (tests set it)
}

// SweepStats is what one Sweep did.
type SweepStats struct {
	Tools    int // tools refreshed (labelled since the last sweep)
	Changed  int // tools whose observed queries changed
	Embedded int // texts embedded
}

// Queries returns the observed queries tool toolID should have now, at most s.Max, best
// first (ObservedQueries in sql/queries/observed.sql says how they are chosen).
func (s *Service) Queries(ctx context.Context, toolID int64) ([]string, error) {
	rows, err := db.New(s.Pool).ObservedQueries(ctx, db.ObservedQueriesParams{
		ToolID: toolID, MaxN: int32(s.Max), MaxChars: MaxChars, MinKeys: int32(s.minKeys())})
	if err != nil {
		return nil, err
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Text
	}
	return out, nil
}

func (s *Service) minKeys() int { return cmp.Or(s.MinKeys, DefaultMinKeys) }

// Refresh makes the tool's observed components equal to Queries. Off (Max 0) it does
// nothing. The lexical index is not flushed (Sweep does it once for all the tools).
func (s *Service) Refresh(ctx context.Context, toolID int64) (enrich.ObservedReport, error) {
	if s.Max <= 0 {
		return enrich.ObservedReport{Skipped: "off"}, nil
	}
	texts, err := s.Queries(ctx, toolID)
	if err != nil {
		return enrich.ObservedReport{}, err
	}
	return s.Enrich.SetObserved(ctx, toolID, texts)
}

// Sweep refreshes every tool labelled since the last sweep (less a margin), and every
// tool with observed queries when a key was revoked since or the threshold is not the one
// the last sweep applied (both can take queries out), a batch of tools at a time in id order, recording its progress after each batch so that a sweep cut
// short resumes where it stopped; then it records where it stopped and flushes the lexical
// index. Off (Max 0) it does nothing and leaves the mark where it was, so that turning
// collection on later picks up the labels written meanwhile.
func (s *Service) Sweep(ctx context.Context) (SweepStats, error) {
	var st SweepStats
	if s.Max <= 0 {
		return st, nil
	}
	q := db.New(s.Pool)
	sw, err := q.StartObservedSweep(ctx)
	if err != nil {
		return st, err
	}
	after := sw.AfterTool
	batch := cmp.Or(s.batch, defaultSweepBatch)
	minKeys := s.minKeys()
	// The threshold is recorded only when a sweep finishes, so a sweep cut short and resumed
	// still refreshes every tool.
	all := !sw.MinKeys.Valid || int(sw.MinKeys.Int32) != minKeys
	for {
		ids, err := q.ListToolsToRefresh(ctx, db.ListToolsToRefreshParams{
			Since: sw.LabelsUntil.Add(-sweepMargin), AllObserved: all, AfterTool: after, N: int32(batch)})
		if err != nil {
			return st, err
		}
		for _, id := range ids {
			rep, err := s.Refresh(ctx, id)
			if err != nil {
				return st, fmt.Errorf("observed queries of tool %d: %w", id, err)
			}
			st.Tools++
			st.Embedded += rep.Embedded
			if rep.Skipped == "" {
				st.Changed++
			}
		}
		if st.Changed > 0 {
			// what changed is searchable before the next batch starts
			if _, err := lexical.Flush(ctx, s.Pool); err != nil {
				return st, err
			}
		}
		if len(ids) < batch {
			break
		}
		after = ids[len(ids)-1]
		if err := q.SetObservedSweepProgress(ctx, db.SetObservedSweepProgressParams{AfterTool: after, SweepingUntil: sw.SweepingUntil}); err != nil {
			return st, err
		}
	}
	if err := q.FinishObservedSweep(ctx, db.FinishObservedSweepParams{MinKeys: int32(minKeys), SweepingUntil: sw.SweepingUntil}); err != nil {
		return st, err
	}
	if st.Tools > 0 && s.Logger != nil {
		s.Logger.Debug("observed queries swept", "tools", st.Tools, "changed", st.Changed, "embedded", st.Embedded)
	}
	return st, nil
}

// ForgetReport is what Forget removed.
type ForgetReport struct {
	Source  string `json:"source"`
	Tools   int    `json:"tools"`   // tools that had observed queries
	Removed int    `json:"removed"` // observed components deleted
}

// Forget removes the observed queries of every tool of the named source, recombines those
// tools' vectors (with the weights of each set, as without observed queries) and flushes
// the lexical index, so that none of the removed words can find a tool when it returns.
// The source's searches until now are forgotten: later refreshes use only later searches.
// It works whether collection is on or off.
func (s *Service) Forget(ctx context.Context, source string) (ForgetReport, error) {
	rep := ForgetReport{Source: source}
	q := db.New(s.Pool)
	src, err := sources.ByName(ctx, q, source)
	if err != nil {
		return rep, err
	}
	if err := q.ForgetSourceObserved(ctx, src.ID); err != nil {
		return rep, err
	}
	// the same searches were the memories of the source's tools (internal/memory)
	if _, err := q.DeleteSourceMemories(ctx, src.ID); err != nil {
		return rep, err
	}
	ids, err := q.ListSourceToolsWithObserved(ctx, src.ID)
	if err != nil || len(ids) == 0 {
		return rep, err
	}
	for _, id := range ids {
		n, err := forgetTool(ctx, s.Pool, id)
		if err != nil {
			return rep, fmt.Errorf("remove the observed queries of tool %d: %w", id, err)
		}
		if n > 0 {
			rep.Tools++
			rep.Removed += n
		}
	}
	if _, err := lexical.Flush(ctx, s.Pool); err != nil {
		return rep, err
	}
	return rep, nil
}

// forgetTool deletes the tool's observed components and recombines its vectors from the
// components it keeps, in one transaction that holds the tool's row (lock order:
// docs/architecture.md#lock-order). Removing embeds nothing: the vectors are recombined
// from the stored ones, in the stored embedding space, so that a process without an
// embedder (an API-only one, the CLI) can remove. Returns how many components it deleted
// (0 for a tool deleted meanwhile or without observed queries).
func forgetTool(ctx context.Context, pool *pgxpool.Pool, toolID int64) (int, error) {
	removed := 0
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		// the space, kept from changing (a reembed) until this commits
		sp, err := q.ShareEmbeddingSpace(ctx)
		if err != nil {
			return fmt.Errorf("the embedding space: %w", err)
		}
		if _, err := q.LockToolHash(ctx, toolID); errors.Is(err, pgx.ErrNoRows) {
			return nil
		} else if err != nil {
			return err
		}
		now, err := q.ListToolComponents(ctx, toolID)
		if err != nil {
			return err
		}
		had := 0
		for _, c := range now {
			if c.Kind == tdwa.KindObserved {
				had++
			}
		}
		if had == 0 {
			return nil
		}
		space := vectors.Space{Model: sp.Model, Dims: int(sp.Dims)}
		if _, err := vectors.Recombine(ctx, q, toolID, now, space, tdwa.KindObserved, nil); err != nil {
			return err
		}
		if err := q.DeleteToolComponentsFrom(ctx, db.DeleteToolComponentsFromParams{ToolID: toolID, Kind: tdwa.KindObserved}); err != nil {
			return err
		}
		removed = had
		return nil
	})
	return removed, err
}
