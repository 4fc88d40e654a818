package tune

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/meaning"
	"github.com/toolgate/toolgate/internal/search"
)

// Scoring the fused ranking. What an agent sees is the fusion of the lexical branch (BM25),
// the vector branch (cosine similarity under the profile's TDWA weights) and the meaning
// branch, so a tune scores a weighting by the rank of the used tool in that fusion: it
// builds each labelled query's lists as the Search statement does (lists) and fuses them
// with the statement's own SQL function, toolgate_fuse (fusedScores). The BM25 scores and
// the meaning cosines do not depend on anything a tune changes; they are read once
// (TuneLexicalScores, TuneMeaningScores). Name matches and query plans are left out: this
// is the plain search of the labelled query.

// lexicalTop is how many tools per labelled query keep their BM25: the lexical list and the
// vector candidates that join it (a vector candidate outside them counts as no lexical match).
const lexicalTop = 200

// lexicalBatch is how many query texts one TuneLexicalScores call reads.
const lexicalBatch = 100

// fusionConfig is how the service fuses: the method, the reciprocal rank constant, the
// candidates per branch, the vector confidence and the meaning branch's weight
// (search.Settings).
type fusionConfig struct {
	method     search.Fusion
	kRRF       float64
	cand       int
	confidence float64
	meaning    float64
}

func fusionOf(st search.Settings) fusionConfig {
	return fusionConfig{method: cmp.Or(st.Fusion, search.FusionRRF), kRRF: st.KRRF, cand: max(st.Candidates, 1),
		confidence: st.VectorConfidence, meaning: st.WeightMeaning}
}

// meaningScores reads, for each labelled query, the meaning cosine of each tool that can
// be a candidate of its lists (its pool and its lexical list's top): by tool id, nothing for
// a tool without a stored meaning, nil for a text without one (the branch off). Nothing is
// read when the branch is off.
func (m *model) meaningScores(ctx context.Context, pool *pgxpool.Pool, texts []string) error {
	if m.fusion.meaning <= 0 {
		return nil
	}
	space, err := meaning.Builtin()
	if err != nil {
		return err
	}
	q := db.New(pool)
	for i := range m.queries {
		mq := &m.queries[i]
		v, ok := space.Vector(texts[i])
		if !ok {
			continue
		}
		ids := make([]int64, 0, len(mq.pool)+m.fusion.cand)
		for _, c := range mq.pool {
			ids = append(ids, m.tools[c.tool].id)
		}
		for _, l := range mq.lexical[:min(len(mq.lexical), m.fusion.cand)] {
			ids = append(ids, l.id)
		}
		rows, err := q.TuneMeaningScores(ctx, db.TuneMeaningScoresParams{Meaning: v, Ids: ids})
		if err != nil {
			return err
		}
		mq.meaning = make(map[int64]float64, len(rows))
		for _, r := range rows {
			mq.meaning[r.ToolID] = r.Sim
		}
	}
	return nil
}

// lexScore is a tool's BM25 for a query.
type lexScore struct {
	id   int64
	bm25 float64
}

// lexicalScores reads the lexical branch of each distinct query text: texts[i]'s tools by
// BM25, best first. progress is called before each batch with the texts read and all.
func lexicalScores(ctx context.Context, pool *pgxpool.Pool, texts []string, progress func(done, total int) error) ([][]lexScore, error) {
	out := make([][]lexScore, len(texts))
	q := db.New(pool)
	for i := 0; i < len(texts); i += lexicalBatch {
		if err := progress(i, len(texts)); err != nil {
			return nil, err
		}
		batch := texts[i:min(i+lexicalBatch, len(texts))]
		rows, err := q.TuneLexicalScores(ctx, db.TuneLexicalScoresParams{Texts: batch, Top: lexicalTop})
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			j := i + int(r.Ord) - 1
			out[j] = append(out[j], lexScore{id: r.ToolID, bm25: r.Bm25})
		}
	}
	return out, nil
}

// prepare indexes each query's lexical branch against its pool, once, for
// reciprocalRanks: the BM25 of each pool candidate (-1: none among the query's lexicalTop),
// the pool positions of the lexical list's candidates that are in the pool, and those that
// are not (a tool without vectors), best first.
func (m *model) prepare() {
	for qi := range m.queries {
		q := &m.queries[qi]
		at := make(map[int64]int, len(q.pool))
		q.poolBM25 = make([]float64, len(q.pool))
		for j, c := range q.pool {
			at[m.tools[c.tool].id] = j
			q.poolBM25[j] = -1
		}
		for _, l := range q.lexical {
			if j, ok := at[l.id]; ok {
				q.poolBM25[j] = l.bm25
			}
		}
		q.lexTop, q.lexOnly = nil, nil
		for _, l := range q.lexical[:min(len(q.lexical), m.fusion.cand)] {
			if j, ok := at[l.id]; ok {
				q.lexTop = append(q.lexTop, j)
			} else {
				q.lexOnly = append(q.lexOnly, l)
			}
		}
	}
}

// entry is a candidate of a list: its pool position (or len(pool)+i for the i-th lexical
// candidate without vectors) and its score in that list.
type entry struct {
	at    int
	score float64
}

// fuser fuses lists in PostgreSQL with toolgate_fuse, the search statement's own fusion
// (sql/functions/fusion.sql): a tune has no copy of the formula. Its first failure sticks
// (err); later calls then do nothing and return no scores.
type fuser struct {
	ctx  context.Context
	pool *pgxpool.Pool
	err  error
}

// fuseChunk is how many queries' lists one TuneFuse statement fuses; the chunks of a split
// run in parallel, on up to fuseParallel connections (a split of 1,400 queries is about
// 140,000 list entries).
const (
	fuseChunk    = 250
	fuseParallel = 4
)

// fuse fuses the lists of each chunk (its groups numbered from 1) and returns each group's
// fused score by tool id, the chunks' groups in order.
func (f *fuser) fuse(fc fusionConfig, chunks []db.TuneFuseParams, groups []int) []map[int64]float64 {
	outs := make([][]map[int64]float64, len(chunks))
	if f.err == nil {
		var g errgroup.Group
		g.SetLimit(fuseParallel)
		for i := range chunks {
			in := &chunks[i]
			in.Method, in.KRrf, in.VecConfidence = string(fc.method), fc.kRRF, fc.confidence
			g.Go(func() (err error) {
				outs[i], err = f.fuseOne(in, groups[i])
				return err
			})
		}
		if err := g.Wait(); err != nil {
			f.err = fmt.Errorf("fuse the rankings: %w", err)
		}
	}
	var out []map[int64]float64
	for i, o := range outs {
		if o == nil {
			o = make([]map[int64]float64, groups[i])
		}
		out = append(out, o...)
	}
	return out
}

// fuseOne runs one chunk's TuneFuse, with the memory to sort and group its lists without
// spilling to disk (SET LOCAL in its own transaction).
func (f *fuser) fuseOne(in *db.TuneFuseParams, groups int) ([]map[int64]float64, error) {
	tx, err := f.pool.Begin(f.ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.WithoutCancel(f.ctx)) //nolint:errcheck // a no-op after Commit
	if _, err := tx.Exec(f.ctx, `SET LOCAL work_mem = '64MB'`); err != nil {
		return nil, err
	}
	rows, err := db.New(tx).TuneFuse(f.ctx, *in)
	if err != nil {
		return nil, err
	}
	out := make([]map[int64]float64, groups)
	for _, r := range rows {
		g := int(r.Grp) - 1
		if out[g] == nil {
			out[g] = map[int64]float64{}
		}
		out[g][r.ToolID] = r.Score
	}
	return out, tx.Commit(f.ctx)
}

// lists are a query's candidate lists under a weighting, as the search statement builds
// them (sql/queries/search.sql): the vector list, the `candidates` tools of the pool
// closest under wt (ties by tool id); the lexical list, the `candidates` best by BM25; the
// meaning list, the cosines of both lists' candidates (before they score each other's);
// with a score fusion each of the first two also holds the other's candidates (the vector
// candidates with a BM25, the lexical ones with their similarity). Each list best first.
func (m *model) lists(q *query, wt weighting, norms []float64, done []bool) (lex, vec, mean []entry, id func(int) int64) {
	id = func(at int) int64 {
		if at < len(q.pool) {
			return m.tools[q.pool[at].tool].id
		}
		return q.lexOnly[at-len(q.pool)].id
	}
	byEntry := func(a, b entry) int { return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(id(a.at), id(b.at))) }
	sims, has := make([]float64, len(q.pool)), make([]bool, len(q.pool))
	inVec, inLex := make([]bool, len(q.pool)), make([]bool, len(q.pool)) // by pool position
	for j, c := range q.pool {
		t := &m.tools[c.tool]
		if !done[c.tool] {
			norms[c.tool], done[c.tool] = t.norm(wt), true
		}
		if sims[j], has[j] = score(c, t, wt, norms[c.tool]); !has[j] {
			continue
		}
		// kept in order as they come (most of a pool falls below the list's last at once)
		e := entry{j, sims[j]}
		if len(vec) == m.fusion.cand {
			if byEntry(e, vec[len(vec)-1]) >= 0 {
				continue
			}
			vec = vec[:len(vec)-1]
		}
		k, _ := slices.BinarySearchFunc(vec, e, byEntry)
		vec = slices.Insert(vec, k, e)
	}
	for _, v := range vec {
		inVec[v.at] = true
	}
	for _, j := range q.lexTop {
		lex = append(lex, entry{j, q.poolBM25[j]})
		inLex[j] = true
	}
	for k, l := range q.lexOnly {
		lex = append(lex, entry{len(q.pool) + k, l.bm25})
	}
	if m.fusion.meaning > 0 && q.meaning != nil {
		seen := make([]bool, len(q.pool)+len(q.lexOnly))
		for _, e := range slices.Concat(lex, vec) {
			if s, ok := q.meaning[id(e.at)]; ok && !seen[e.at] {
				seen[e.at] = true
				mean = append(mean, entry{e.at, s})
			}
		}
	}
	if m.fusion.method != search.FusionRRF {
		for _, j := range q.lexTop {
			if has[j] && !inVec[j] {
				vec = append(vec, entry{j, sims[j]})
			}
		}
		for _, v := range vec[:min(len(vec), m.fusion.cand)] {
			if b := q.poolBM25[v.at]; b >= 0 && !inLex[v.at] {
				lex = append(lex, entry{v.at, b})
			}
		}
	}
	slices.SortFunc(lex, byEntry)
	slices.SortFunc(vec, byEntry)
	slices.SortFunc(mean, byEntry)
	return lex, vec, mean, id
}

// fusedScores returns, for each query of split, the fused score of each tool its lists
// hold under wt, by tool id (toolgate_fuse over the lists of every query, in one statement).
// The queries must have been prepared (prepare).
func (m *model) fusedScores(wt weighting, split []int) []map[int64]float64 {
	norms, done := make([]float64, len(m.tools)), make([]bool, len(m.tools))
	var chunks []db.TuneFuseParams
	var groups []int
	for i, qi := range split {
		if i%fuseChunk == 0 {
			chunks, groups = append(chunks, db.TuneFuseParams{}), append(groups, 0)
		}
		in, g := &chunks[len(chunks)-1], groups[len(groups)-1]
		groups[len(groups)-1]++
		lex, vec, mean, id := m.lists(&m.queries[qi], wt, norms, done)
		for _, l := range []struct {
			branch  string
			entries []entry
			w       float64
		}{{"l", lex, wt.wl}, {"v", vec, wt.wv}, {"m", mean, m.fusion.meaning}} {
			for r, e := range l.entries {
				in.Grps, in.Branches, in.Variants = append(in.Grps, int32(g+1)), append(in.Branches, l.branch), append(in.Variants, 1)
				in.ToolIds, in.Ranks = append(in.ToolIds, id(e.at)), append(in.Ranks, int64(r+1))
				in.Scores, in.Weights = append(in.Scores, e.score), append(in.Weights, l.w)
			}
		}
	}
	return m.fuser.fuse(m.fusion, chunks, groups)
}

// reciprocalRanks returns, for each query of split, 1/rank of its best-ranked labelled tool
// in the fused ranking under wt (0 when no labelled tool is a candidate of either branch).
// A tool that ties with the labelled one ranks before it: a weighting gets no credit for a
// tie.
func (m *model) reciprocalRanks(wt weighting, split []int) []float64 {
	out := make([]float64, len(split))
	for i, fused := range m.fusedScores(wt, split) {
		positives := m.queries[split[i]].positives
		best, found := math.Inf(-1), false
		for id, s := range fused {
			if positives[id] && s > best {
				best, found = s, true
			}
		}
		if !found {
			continue
		}
		rank := 1
		for id, s := range fused {
			if !positives[id] && s >= best {
				rank++
			}
		}
		out[i] = 1 / float64(rank)
	}
	return out
}
