package memory

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/toolgate/toolgate/internal/db"
)

const (
	// DefaultListFrom is TOOLGATE_MEMORY_LISTS_FROM's default: the number of memories from
	// which a tenant's are split into lists (docs/learning.md, "How it works").
	DefaultListFrom = 500
	// kmeansRounds is how many rounds of Lloyd's algorithm make a tenant's lists.
	kmeansRounds = 8
	// kmeansSample bounds the memories the k-means learns from: at most this many per list,
	// spread over the tenant's (every memory is then filed under its nearest centroid).
	kmeansSample = 64
)

// ListFromSetting is the ListFrom of TOOLGATE_MEMORY_LISTS_FROM's value n: n memories, 0
// never.
func ListFromSetting(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

func (s *Service) listFrom() int {
	if s.ListFrom == 0 {
		return DefaultListFrom
	}
	return max(s.ListFrom, 0)
}

// Cluster keeps each tenant's lists: a tenant with at least ListFrom memories has them split
// into about √n lists around centroids (spherical k-means), made again when its count has
// doubled or halved since; a memory embedded since is filed under its nearest list; a tenant
// below ListFrom has its lists dropped. The search's exact scan then reads a quarter of a
// tenant's lists, nearest the request first, and list -1 (sql/queries/search.sql, CTE mem).
// Each tenant changes in one transaction that holds its tool_memory_tenants row, so a sweep
// stopped part way leaves every tenant whole and the next finishes the rest; lists made from
// a count that lags the table only cost the search a little more reading.
func (s *Service) Cluster(ctx context.Context) (int, error) {
	from := s.listFrom()
	tenants, err := db.New(s.Pool).MemoryTenantsToList(ctx, int32(from))
	if err != nil {
		return 0, err
	}
	for _, tenant := range tenants {
		if err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
			return clusterTenant(ctx, db.New(tx), tenant, from)
		}); err != nil {
			return 0, fmt.Errorf("lists of tenant %q: %w", tenant, err)
		}
	}
	return len(tenants), nil
}

// clusterTenant makes, drops or completes one tenant's lists, in the caller's transaction,
// as toolgate_memory_lists_action says once it holds the tenant's row.
func clusterTenant(ctx context.Context, q *db.Queries, tenant string, from int) error {
	c, err := q.LockMemoryTenant(ctx, db.LockMemoryTenantParams{Tenant: tenant, ListFrom: int32(from)})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // its memories went since it was read
	}
	if err != nil {
		return err
	}
	switch c.Action {
	case "":
		return nil // another sweep did it
	case "drop":
		if err := q.DeleteMemoryLists(ctx, tenant); err != nil {
			return err
		}
		if err := q.FileMemories(ctx, db.FileMemoriesParams{Tenant: tenant, AllMemories: true}); err != nil {
			return err
		}
		return q.SetMemoryTenantLists(ctx, db.SetMemoryTenantListsParams{Tenant: tenant})
	case "file":
		return q.FileMemories(ctx, db.FileMemoriesParams{Tenant: tenant})
	case "make": // below
	default:
		return fmt.Errorf("unknown lists action %q", c.Action)
	}
	rows, err := q.TenantMemoryEmbeddings(ctx, tenant)
	if err != nil {
		return err
	}
	vs := make([][]float32, len(rows))
	for i, r := range rows {
		vs[i] = r.Slice()
	}
	centroids := kmeans(vs, int(math.Round(math.Sqrt(float64(len(vs))))), kmeansRounds)
	if len(centroids) == 0 {
		return nil // none embedded yet: the next sweep
	}
	if err := q.DeleteMemoryLists(ctx, tenant); err != nil {
		return err
	}
	cs := make([]pgvector.Vector, len(centroids))
	for i, c := range centroids {
		cs[i] = pgvector.NewVector(c)
	}
	if err := q.InsertMemoryLists(ctx, db.InsertMemoryListsParams{Tenant: tenant, Centroids: cs}); err != nil {
		return err
	}
	if err := q.FileMemories(ctx, db.FileMemoriesParams{Tenant: tenant, AllMemories: true}); err != nil {
		return err
	}
	return q.SetMemoryTenantLists(ctx, db.SetMemoryTenantListsParams{Tenant: tenant, Lists: int32(len(cs)), Listed: c.Memories})
}

// kmeans returns up to k unit centroids of the unit vectors vs by spherical k-means: it
// starts from k vectors spread evenly over vs, learns from at most kmeansSample vectors per
// centroid (spread evenly too), and moves each centroid to the normalized mean of the
// vectors nearest it by inner product, rounds times; a centroid no vector is nearest stays.
// Deterministic: the same vectors give the same centroids.
func kmeans(vs [][]float32, k, rounds int) [][]float32 {
	k = min(max(k, 1), len(vs))
	if k == 0 {
		return nil
	}
	sample := vs
	if m := k * kmeansSample; len(vs) > m {
		sample = make([][]float32, m)
		for i := range sample {
			sample[i] = vs[i*len(vs)/m]
		}
	}
	dims := len(vs[0])
	centroids := make([][]float32, k)
	for i := range centroids {
		centroids[i] = append([]float32(nil), vs[i*len(vs)/k]...)
	}
	sums := make([][]float64, k)
	for i := range sums {
		sums[i] = make([]float64, dims)
	}
	counts := make([]int, k)
	for range rounds {
		for i := range sums {
			clear(sums[i])
			counts[i] = 0
		}
		for _, v := range sample {
			c := nearest(centroids, v)
			for d, x := range v {
				sums[c][d] += float64(x)
			}
			counts[c]++
		}
		for i, sum := range sums {
			if counts[i] == 0 {
				continue
			}
			var norm float64
			for _, x := range sum {
				norm += x * x
			}
			if norm == 0 {
				continue
			}
			norm = math.Sqrt(norm)
			for d, x := range sum {
				centroids[i][d] = float32(x / norm)
			}
		}
	}
	return centroids
}

// nearest is the index of the centroid with the largest inner product with v.
func nearest(centroids [][]float32, v []float32) int {
	best, bestDot := 0, math.Inf(-1)
	for i, c := range centroids {
		var dot float32
		for d, x := range v {
			dot += x * c[d]
		}
		if float64(dot) > bestDot {
			best, bestDot = i, float64(dot)
		}
	}
	return best
}
