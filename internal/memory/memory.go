// Package memory keeps what each tenant's searches taught: the query of a search after
// which an agent used a tool becomes a memory of that tool (tool_memories: tenant, tool,
// query text and its embedding), and the search statement's memory branch lets the caller's
// tenant's memories and the operator's vote for the tools they led to, by how close the new
// request is to them (sql/queries/search.sql, CTEs mten and mem; docs/learning.md).
//
// Whose memory: a search key's searches teach its tenant (auth.Spec.Tenant, else the key
// alone); searches without a key and with an admin key are the operator's and teach every
// tenant; a query that MinKeys distinct search keys asked is k-anonymous and teaches every
// tenant too (the rule of internal/observed). Nothing one tenant taught is read by another
// tenant's search.
//
// The memories are derived state: Sweep recomputes a tool's from the labels
// (MemoriesWanted in sql/queries/memory.sql), so a revoked key, a failed call, a forgotten
// source or tool and the threshold all apply at the next sweep; a revocation also deletes
// the key's memories at once (auth.Keys.Revoke), and deleting a tool deletes its memories
// (ON DELETE CASCADE).
package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/derrors"
	"github.com/toolgate/toolgate/internal/embed"
)

const (
	// MaxChars is the longest query kept (characters, whitespace collapsed): a longer one is
	// a whole task pasted in, not the words of a request.
	MaxChars = 200
	// DefaultMaxPerTool is TOOLGATE_MEMORY_PER_TOOL's default: the most recently labelled
	// memories kept per tool and tenant.
	DefaultMaxPerTool = 50
	// MaxMaxPerTool bounds TOOLGATE_MEMORY_PER_TOOL.
	MaxMaxPerTool = 1000
	// DefaultMinKeys is the k of the k-anonymity rule when none is given (as
	// observed.DefaultMinKeys, TOOLGATE_OBSERVED_MIN_KEYS).
	DefaultMinKeys = 3
	// sweepMargin: a label's created_at is its transaction's start, so one committed just
	// after a sweep read the labels may carry an earlier time (internal/observed).
	sweepMargin = time.Minute
	// defaultBatch is how many tools a sweep refreshes between two records of its progress.
	defaultBatch = 100
)

// Service writes, lists and removes memories.
type Service struct {
	Pool *pgxpool.Pool
	// Embedder embeds the memories as the search embeds a query (with the idf weights of
	// the whole index for an embed.Weighted embedder when QueryIDF); nil: Sweep does
	// nothing (List and Forget need none).
	Embedder embed.Embedder
	QueryIDF bool
	// MaxPerTool is the most memories kept per tool and tenant; 0 is DefaultMaxPerTool.
	MaxPerTool int
	// MinKeys is how many distinct search keys make a query global; 0 is DefaultMinKeys.
	MinKeys int
	// ListFrom is the number of memories from which a tenant's are split into lists
	// (Cluster); 0 is DefaultListFrom, below 0 never.
	ListFrom int
	// Demotions makes Sweep recompute the negative evidence too (tool_demotions), for a
	// search whose WeightDemotion is above 0.
	Demotions bool
	Logger    *slog.Logger

	batch int // tools per batch of a sweep; 0 is defaultBatch
}

// SweepStats is what one Sweep did.
type SweepStats struct {
	Tools    int // tools refreshed
	Added    int // memories written
	Removed  int // memories deleted
	Embedded int // texts embedded
	Tenants  int // tenants whose lists were made, dropped or completed (Cluster)
}

func (s *Service) minKeys() int    { return cmp.Or(s.MinKeys, DefaultMinKeys) }
func (s *Service) maxPerTool() int { return cmp.Or(s.MaxPerTool, DefaultMaxPerTool) }

// Sweep refreshes the memories of every tool labelled since the last sweep (less a margin),
// of every tool with memories not yet embedded, and of every tool with memories when a key
// was revoked since or the threshold is not the last sweep's, a batch at a time in id order,
// recording its progress so that a sweep cut short resumes. Then it recounts each tenant's
// memories (which scan the search reads them with), keeps their lists (Cluster) and, with
// Demotions, when it refreshed a tool, recomputes the negative evidence.
func (s *Service) Sweep(ctx context.Context) (SweepStats, error) {
	var st SweepStats
	if s.Embedder == nil {
		return st, nil
	}
	q := db.New(s.Pool)
	sw, err := q.StartMemorySweep(ctx)
	if err != nil {
		return st, err
	}
	after, batch, minKeys := sw.AfterTool, cmp.Or(s.batch, defaultBatch), s.minKeys()
	all := !sw.MinKeys.Valid || int(sw.MinKeys.Int32) != minKeys
	for {
		ids, err := q.ListMemoryToolsToRefresh(ctx, db.ListMemoryToolsToRefreshParams{
			Since: sw.LabelsUntil.Add(-sweepMargin), AllTools: all, AfterTool: after, N: int32(batch)})
		if err != nil {
			return st, err
		}
		for _, id := range ids {
			if err := s.Refresh(ctx, id, &st); err != nil {
				return st, fmt.Errorf("memories of tool %d: %w", id, err)
			}
		}
		if len(ids) < batch {
			break
		}
		after = ids[len(ids)-1]
		if err := q.SetMemorySweepProgress(ctx, db.SetMemorySweepProgressParams{AfterTool: after, SweepingUntil: sw.SweepingUntil}); err != nil {
			return st, err
		}
	}
	if err := q.RecountMemoryTenants(ctx); err != nil {
		return st, err
	}
	if st.Tenants, err = s.Cluster(ctx); err != nil {
		return st, err
	}
	if s.Demotions && st.Tools > 0 {
		// labels came, a key was revoked or the threshold changed: the negative evidence too
		if err := q.RefreshDemotions(ctx); err != nil {
			return st, err
		}
	}
	if err := q.FinishMemorySweep(ctx, db.FinishMemorySweepParams{MinKeys: int32(minKeys), SweepingUntil: sw.SweepingUntil}); err != nil {
		return st, err
	}
	if st.Tools > 0 && s.Logger != nil {
		s.Logger.Debug("memories swept", "tools", st.Tools, "added", st.Added, "removed", st.Removed, "embedded", st.Embedded, "tenants", st.Tenants)
	}
	return st, nil
}

// rowKey names a memory: its tenant, teaching key (0: none) and normalized text.
type rowKey struct {
	tenant string
	key    int64
	norm   string
}

// Refresh makes the tool's memories equal to MemoriesWanted: it embeds the texts it lacks
// with no connection held, then writes the difference in one transaction that keeps the
// embedding space from changing (a reembed clears the embeddings, and the next sweep
// embeds them again) and holds the tool's memories (locks.MemoryTool), whose rows it reads
// again there: two sweeps at once each write what the other left to do.
func (s *Service) Refresh(ctx context.Context, toolID int64, st *SweepStats) error {
	q := db.New(s.Pool)
	want, err := q.MemoriesWanted(ctx, db.MemoriesWantedParams{ToolID: toolID, MaxChars: MaxChars,
		MinKeys: int32(s.minKeys()), MaxN: int32(s.maxPerTool())})
	if err != nil {
		return err
	}
	have, err := q.ListToolMemoryRows(ctx, toolID)
	if err != nil {
		return err
	}
	st.Tools++
	// the texts to embed: new memories, and stored ones without an embedding
	var texts []string
	index := map[string]int{}
	stored := storedRows(have)
	for _, w := range want {
		if h, ok := stored[rowKey{w.Tenant, w.KeyID, w.Norm}]; !ok || !h.Embedded {
			if _, ok := index[w.Text]; !ok {
				index[w.Text] = len(texts)
				texts = append(texts, w.Text)
			}
		}
	}
	vecs, err := s.embed(ctx, texts)
	if err != nil {
		return err
	}
	st.Embedded += len(texts)
	return pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		if err := embed.CheckSpace(ctx, tx, s.Embedder); err != nil {
			return err
		}
		tq := db.New(tx)
		if err := tq.LockToolMemories(ctx, toolID); err != nil {
			return err
		}
		have, err := tq.ListToolMemoryRows(ctx, toolID)
		if err != nil {
			return err
		}
		stored := storedRows(have)
		kept := map[int64]bool{}
		for _, w := range want {
			var vec *pgvector.Vector
			if i, ok := index[w.Text]; ok {
				v := pgvector.NewVector(vecs[i])
				vec = &v
			}
			h, ok := stored[rowKey{w.Tenant, w.KeyID, w.Norm}]
			if !ok {
				err := tq.InsertToolMemory(ctx, db.InsertToolMemoryParams{ToolID: toolID, Tenant: w.Tenant,
					KeyID: pgtype.Int8{Int64: w.KeyID, Valid: w.KeyID != 0}, Norm: w.Norm, Query: w.Text,
					Embedding: vec, Searches: w.Searches, LabelledAt: w.LabelledAt})
				if err != nil {
					return err
				}
				st.Added++
				continue
			}
			kept[h.ID] = true
			if h.Query != w.Text || h.Searches != w.Searches || !h.LabelledAt.Equal(w.LabelledAt) || (vec != nil && !h.Embedded) {
				if err := tq.UpdateToolMemory(ctx, db.UpdateToolMemoryParams{ID: h.ID, Query: w.Text,
					Searches: w.Searches, LabelledAt: w.LabelledAt, Embedding: vec}); err != nil {
					return err
				}
			}
		}
		var gone []int64
		for _, h := range have {
			if !kept[h.ID] {
				gone = append(gone, h.ID)
			}
		}
		if len(gone) > 0 {
			st.Removed += len(gone)
			return tq.DeleteToolMemoriesByID(ctx, gone)
		}
		return nil
	})
}

// storedRows indexes a tool's memory rows by tenant, key and normalized text.
func storedRows(have []db.ListToolMemoryRowsRow) map[rowKey]db.ListToolMemoryRowsRow {
	stored := make(map[rowKey]db.ListToolMemoryRowsRow, len(have))
	for _, h := range have {
		stored[rowKey{h.Tenant, h.KeyID.Int64, h.Norm}] = h
	}
	return stored
}

// embed embeds texts as the search embeds a query: an embed.Weighted embedder gets the
// idf of their words over the whole index (internal/search, Service.embed).
func (s *Service) embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	w, ok := s.Embedder.(embed.Weighted)
	if !ok || !s.QueryIDF {
		return s.Embedder.Embed(ctx, texts)
	}
	words := embed.QueryWords(texts)
	if words == nil {
		words = []string{}
	}
	rows, err := db.New(s.Pool).SearchWordIDF(ctx, db.SearchWordIDFParams{Words: words})
	if err != nil {
		return nil, fmt.Errorf("query word idf: %w", err)
	}
	idf := make(map[string]float64, len(rows))
	for _, r := range rows {
		idf[r.Word] = r.Idf
	}
	return w.EmbedWeighted(ctx, texts, idf)
}

// Memory is one memory of a tool, as GET /admin/tools/{name}/memories lists it.
type Memory struct {
	// ID names the memory for its removal (DELETE /admin/tools/{name}/memories/{id}).
	ID int64 `json:"id"`
	// Tenant is whose it is: "" the operator's or global (k-anonymous), "key:<name>" a
	// key of no tenant, else the tenant's name.
	Tenant string `json:"tenant"`
	// Key is the key whose searches taught it (empty for a global memory).
	Key        string    `json:"key,omitempty"`
	Query      string    `json:"query"`
	Searches   int       `json:"searches"`
	LabelledAt time.Time `json:"labelled_at"`
}

// List returns what the named tool learned: every tenant's memories of it, the most
// recently labelled first (a *catalog.ToolNotFoundError when there is no such tool).
func (s *Service) List(ctx context.Context, tool string) ([]Memory, error) {
	q := db.New(s.Pool)
	t, err := toolByName(ctx, q, tool)
	if err != nil {
		return nil, err
	}
	rows, err := q.ListToolMemories(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	out := make([]Memory, len(rows))
	for i, r := range rows {
		m := Memory{ID: r.ID, Tenant: r.Tenant, Query: r.Query, Searches: int(r.Searches), LabelledAt: r.LabelledAt}
		if r.KeyName != nil {
			m.Key = *r.KeyName
			if strings.HasPrefix(r.Tenant, "key:") {
				// a key of its own: named by its key, not its internal id
				m.Tenant = "key:" + *r.KeyName
			}
		}
		out[i] = m
	}
	return out, nil
}

// Forget removes what the named tool learned, every tenant's, and makes the searches until
// now teach it nothing again. It returns how many memories it deleted.
func (s *Service) Forget(ctx context.Context, tool string) (int64, error) {
	q := db.New(s.Pool)
	t, err := toolByName(ctx, q, tool)
	if err != nil {
		return 0, err
	}
	return q.ForgetToolMemories(ctx, t.ID)
}

// MemoryNotFoundError is a memory id the tool does not have (never, or removed since).
type MemoryNotFoundError struct {
	Tool string
	ID   int64
}

func (e *MemoryNotFoundError) Error() string {
	return fmt.Sprintf("tool %s has no memory %d", e.Tool, e.ID)
}

// Is puts a MemoryNotFoundError in the NotFound category.
func (e *MemoryNotFoundError) Is(target error) bool { return target == derrors.NotFound }

// ForgetOne removes one memory of the named tool, its tenant's memories of the same query
// with it (one per key of the tenant), and makes its tenant's searches of that query until
// now teach the tool nothing again; the tool's other memories stay. It returns how many
// memories it deleted: a *MemoryNotFoundError when the tool has no memory id, a
// *catalog.ToolNotFoundError when there is no such tool.
func (s *Service) ForgetOne(ctx context.Context, tool string, id int64) (int64, error) {
	q := db.New(s.Pool)
	t, err := toolByName(ctx, q, tool)
	if err != nil {
		return 0, err
	}
	n, err := q.ForgetToolMemory(ctx, db.ForgetToolMemoryParams{ID: id, ToolID: t.ID})
	if err == nil && n == 0 {
		return 0, &MemoryNotFoundError{Tool: tool, ID: id}
	}
	return n, err
}

func toolByName(ctx context.Context, q *db.Queries, name string) (db.Tool, error) {
	t, err := q.GetToolByName(ctx, name)
	if errors.Is(err, pgx.ErrNoRows) {
		return t, &catalog.ToolNotFoundError{Name: name}
	}
	return t, err
}
