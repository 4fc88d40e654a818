package tune

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/tdwa"
)

// scanBatch is how many tools' component vectors one read returns.
const scanBatch = 500

// kindIndex maps a weightable kind to its index in tdwa.Kinds; concat is nKinds.
func kindIndex(kind string) (int, bool) {
	if kind == tdwa.KindConcat {
		return nKinds, true
	}
	i := slices.Index(tdwa.Kinds, kind)
	return i, i >= 0
}

// scan reads the stored component vectors of every tool once, in id order, and builds the
// model: each tool's kinds and Gram matrix, and for each query the union of the poolPerKind
// tools closest to it by each kind's vector alone, plus its forced tools (its labelled tools
// and lexical candidates: positives[j] ⊆ forced[j]). A tool that
// ranks high under some weighting is close to the query by at least one of the kinds it
// weighs, so the pools hold the tools that compete with the labelled ones; ranks are
// computed among them. progress is called after each batch with tools scanned and total.
func scan(ctx context.Context, pool *pgxpool.Pool, vecs [][]float32, positives, forced []map[int64]bool, poolPerKind int,
	progress func(done, total int)) (*model, error) {
	q := db.New(pool)
	total, err := q.CountAllTools(ctx)
	if err != nil {
		return nil, err
	}
	m := &model{present: make([]bool, nKinds), queries: make([]query, len(vecs))}
	heaps := make([][]topK, len(vecs))
	found := make([][]candidate, len(vecs))
	for j := range heaps {
		heaps[j] = make([]topK, nKinds+1)
		for k := range heaps[j] {
			heaps[j][k].k = poolPerKind
		}
	}
	dims := -1
	scanned := 0
	for cursor := int64(0); ; {
		ids, err := q.ListToolIDsAfter(ctx, db.ListToolIDsAfterParams{ID: cursor, Limit: scanBatch})
		if err != nil {
			return nil, err
		}
		if len(ids) == 0 {
			break
		}
		cursor = ids[len(ids)-1]
		rows, err := q.ListComponentVectors(ctx, ids)
		if err != nil {
			return nil, err
		}
		batchTools, batchKinds, err := m.addTools(rows, &dims)
		if err != nil {
			return nil, err
		}
		for _, qv := range vecs {
			if len(batchTools) > 0 && len(qv) != dims {
				return nil, fmt.Errorf("query vectors have %d dimensions, the stored components %d: were they embedded by another model?", len(qv), dims)
			}
		}
		m.offerBatch(batchTools, batchKinds, vecs, forced, heaps, found)
		scanned += len(ids)
		if progress != nil {
			progress(scanned, int(max(total, int64(scanned))))
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	m.fillPools(positives, heaps, found)
	return m, nil
}

// addTools adds the tools of a batch of component vector rows (in tool order) to the
// model, leaving out a tool with no weightable kind and no concat vector, and returns the
// added tools' indexes and their per-kind vectors. dims is the vectors' dimensions, set by
// the first one read (-1 until then).
func (m *model) addTools(rows []db.ListComponentVectorsRow, dims *int) (batchTools []int, batchKinds [][][]float64, err error) {
	for start := 0; start < len(rows); {
		end := start
		for end < len(rows) && rows[end].ToolID == rows[start].ToolID {
			end++
		}
		kinds, err := kindVectors(rows[start:end], dims)
		if err != nil {
			return nil, nil, err
		}
		start = end
		if kinds == nil {
			continue
		}
		t := newTool(rows[end-1].ToolID, kinds)
		if !t.anyKind() && !t.concat {
			continue
		}
		for k, v := range kinds[:nKinds] {
			m.present[k] = m.present[k] || v != nil
		}
		batchTools = append(batchTools, len(m.tools))
		batchKinds = append(batchKinds, kinds)
		m.tools = append(m.tools, t)
	}
	return batchTools, batchKinds, nil
}

// offerBatch offers a batch's tools to every query's pools (offer): the queries are split
// among the cores (each query's pools are its own, so no lock is needed).
func (m *model) offerBatch(batchTools []int, batchKinds [][][]float64, vecs [][]float32, forced []map[int64]bool, heaps [][]topK, found [][]candidate) {
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), max(len(vecs), 1))
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dots := make([]float64, nKinds+1)
			for j := w; j < len(vecs); j += workers {
				for b, ti := range batchTools {
					offer(ti, m.tools[ti].id, batchKinds[b], vecs[j], forced[j], heaps[j], &found[j], dots)
				}
			}
		}()
	}
	wg.Wait()
}

// fillPools makes each query's pool once every tool is offered: its found forced tools,
// then the closest tools by each kind, each tool once.
func (m *model) fillPools(positives []map[int64]bool, heaps [][]topK, found [][]candidate) {
	for j := range m.queries {
		m.queries[j].positives = positives[j]
		seen := map[int]bool{}
		add := func(c candidate) {
			if !seen[c.tool] {
				seen[c.tool] = true
				m.queries[j].pool = append(m.queries[j].pool, c)
			}
		}
		for _, c := range found[j] {
			add(c)
		}
		for k := range heaps[j] {
			for _, e := range heaps[j][k].entries {
				add(e.c)
			}
		}
	}
}

// offer computes the query's dot products with the tool's kind vectors and keeps the tool
// in the query's pools where it ranks among the closest by some kind, and among the found
// forced tools when it is one. dots is the caller's scratch space.
func offer(ti int, id int64, kinds [][]float64, qv []float32, forced map[int64]bool, heaps []topK, found *[]candidate, dots []float64) {
	keep := forced[id]
	for k, v := range kinds {
		dots[k] = 0
		if v != nil {
			dots[k] = dot(qv, v)
			keep = keep || heaps[k].wants(dots[k])
		}
	}
	if !keep {
		return
	}
	c := candidate{tool: ti, dots: slices.Clone(dots)}
	if forced[id] {
		*found = append(*found, c)
	}
	for k, v := range kinds {
		if v != nil {
			heaps[k].offer(c, dots[k])
		}
	}
}

// kindVectors returns one tool's per-kind vectors (index kindIndex; nil where absent): the
// mean of its components of the kind, as tdwa.Combine averages the synthetic questions.
// It returns nil for a tool with no embedded component.
func kindVectors(rows []db.ListComponentVectorsRow, dims *int) ([][]float64, error) {
	var kinds [][]float64
	counts := make([]int, nKinds+1)
	for _, r := range rows {
		if r.Embedding == nil {
			continue
		}
		k, ok := kindIndex(r.Kind)
		if !ok {
			continue
		}
		v := r.Embedding.Slice()
		if *dims >= 0 && len(v) != *dims {
			return nil, fmt.Errorf("tool %d: component %s/%d has %d dimensions, others %d", r.ToolID, r.Kind, r.Ordinal, len(v), *dims)
		}
		*dims = len(v)
		if kinds == nil {
			kinds = make([][]float64, nKinds+1)
		}
		if kinds[k] == nil {
			kinds[k] = make([]float64, len(v))
		}
		for i, x := range v {
			kinds[k][i] += float64(x)
		}
		counts[k]++
	}
	for k, v := range kinds {
		for i := range v {
			v[i] /= float64(counts[k])
		}
	}
	return kinds, nil
}

func newTool(id int64, kinds [][]float64) tool {
	t := tool{id: id, has: make([]bool, nKinds), gram: make([]float64, nKinds*nKinds), concat: kinds[nKinds] != nil}
	for i := range nKinds {
		if kinds[i] == nil {
			continue
		}
		t.has[i] = true
		for j := i; j < nKinds; j++ {
			if kinds[j] == nil {
				continue
			}
			g := 0.0
			for d, x := range kinds[i] {
				g += x * kinds[j][d]
			}
			t.gram[i*nKinds+j], t.gram[j*nKinds+i] = g, g
		}
	}
	return t
}

func (t *tool) anyKind() bool { return slices.Contains(t.has, true) }

func dot(q []float32, v []float64) float64 {
	s := 0.0
	for i, x := range q {
		s += float64(x) * v[i]
	}
	return s
}
