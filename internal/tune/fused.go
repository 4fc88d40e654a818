package tune

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/meaning"
	"github.com/toolgate/toolgate/internal/search"
)

// Scoring the fused ranking. What an agent sees is the fusion of the lexical branch (BM25)
// and the vector branch (cosine similarity under the profile's TDWA weights), so a tune
// scores a weighting by the rank of the used tool in that fusion, as the Search statement
// computes it (sql/queries/search.sql, fused): the vector list is the `candidates` tools of
// the query's pool closest under the weighting; the lexical list the `candidates` best by
// BM25; with a score fusion (minmax, dbsf) each list also holds the other's candidates (the
// vector candidates with a BM25 above 0, the lexical ones with their similarity), and a
// tool's fused score is the sum of its branch shares, each weighted by the branch's fusion
// weight. The meaning branch (search.Settings.WeightMeaning > 0) re-scores the candidates of
// both lists, the lexical one and the vector one before they score each other's, by the
// cosine of their meaning and the query's. The BM25 scores and the meaning cosines do not
// depend on anything a tune changes; they are read once (TuneLexicalScores,
// TuneMeaningScores). Name matches and query plans are left out: this is the plain search
// of the labelled query.

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

// vectorWeight is the vector list's weight w given its best similarity mx, as the
// statement's fused CTE computes it: w · min(1, mx / τ) with a confidence τ, else w.
func (f fusionConfig) vectorWeight(w, mx float64) float64 {
	if f.confidence <= 0 {
		return w
	}
	return w * min(1, max(mx, 0)/f.confidence)
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

// listStats are a candidate list's statistics for the score fusions.
type listStats struct {
	n              int
	mx, mn, mu, sd float64
}

// share is a candidate's share (before its branch weight) from a list, as the statement's
// fused CTE computes it; rank is 1-based.
func (f fusionConfig) share(s float64, rank int, st listStats) float64 {
	switch f.method {
	case search.FusionMinMax:
		if st.mx > st.mn {
			return ((s-st.mn)*float64(st.n-1) + (st.mx - st.mn)) / ((st.mx - st.mn) * float64(st.n))
		}
		return 1
	case search.FusionDBSF:
		if st.sd > 0 {
			return (s - (st.mu - 3*st.sd)) / (6 * st.sd)
		}
		return 0.5
	}
	return 1 / (f.kRRF + float64(rank))
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

// reciprocalRanks returns, for each query of split, 1/rank of its best-ranked labelled tool
// in the fused ranking under wt (0 when no labelled tool is a candidate of either branch).
// A tool that ties with the labelled one ranks before it: a weighting gets no credit for a
// tie. The queries must have been prepared (prepare).
func (m *model) reciprocalRanks(wt weighting, split []int) []float64 {
	norms := make([]float64, len(m.tools))
	done := make([]bool, len(m.tools))
	out := make([]float64, len(split))
	var sims, fused []float64
	var has, inVec, inLex, inMeaning []bool
	var vec, lex, mean []entry
	for i, qi := range split {
		q := &m.queries[qi]
		n := len(q.pool) + len(q.lexOnly)
		sims, has = resize(sims, n), resize(has, n)
		fused, inVec, inLex, inMeaning = resize(fused, n), resize(inVec, n), resize(inLex, n), resize(inMeaning, n)
		id := func(at int) int64 {
			if at < len(q.pool) {
				return m.tools[q.pool[at].tool].id
			}
			return q.lexOnly[at-len(q.pool)].id
		}
		// the vector list: the candidates closest under wt (ties by tool id), kept in order
		// as they come (most of a pool falls below the list's last at once)
		byEntry := func(a, b entry) int { return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(id(a.at), id(b.at))) }
		vec = vec[:0]
		for j, c := range q.pool {
			t := &m.tools[c.tool]
			if !done[c.tool] {
				norms[c.tool], done[c.tool] = t.norm(wt), true
			}
			sims[j], has[j] = score(c, t, wt, norms[c.tool])
			if !has[j] {
				continue
			}
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
		// the lexical list: its candidates by BM25
		lex = lex[:0]
		for _, j := range q.lexTop {
			lex = append(lex, entry{j, q.poolBM25[j]})
			inLex[j] = true
		}
		for k, l := range q.lexOnly {
			lex = append(lex, entry{len(q.pool) + k, l.bm25})
		}
		// the meaning list: both lists' candidates (before they score each other's) by the
		// cosine of their meaning
		mean = mean[:0]
		if m.fusion.meaning > 0 && q.meaning != nil {
			for _, l := range [][]entry{lex, vec} {
				for _, e := range l {
					if s, ok := q.meaning[id(e.at)]; ok && !inMeaning[e.at] {
						inMeaning[e.at] = true
						mean = append(mean, entry{e.at, s})
					}
				}
			}
		}
		if m.fusion.method != search.FusionRRF {
			// each list also scores the other's candidates
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
		for _, list := range []struct {
			l      []entry
			w      float64
			vector bool
		}{{lex, wt.wl, false}, {vec, wt.wv, true}, {mean, m.fusion.meaning, false}} {
			if len(list.l) == 0 {
				continue
			}
			st := listStats{n: len(list.l), mx: math.Inf(-1), mn: math.Inf(1)}
			for _, e := range list.l {
				st.mx, st.mn = max(st.mx, e.score), min(st.mn, e.score)
				st.mu += e.score
			}
			st.mu /= float64(st.n)
			for _, e := range list.l {
				st.sd += (e.score - st.mu) * (e.score - st.mu)
			}
			st.sd = math.Sqrt(st.sd / float64(st.n))
			w := list.w
			if list.vector {
				w = m.fusion.vectorWeight(w, st.mx)
			}
			for r, e := range list.l {
				fused[e.at] += w * m.fusion.share(e.score, r+1, st)
			}
		}
		best, found := math.Inf(-1), false
		ranked := func(at int) bool { return inVec[at] || inLex[at] || at >= len(q.pool) }
		for _, v := range vec {
			inVec[v.at] = true // the similarity-scored lexical candidates too
		}
		for _, l := range lex {
			inLex[l.at] = true
		}
		for at := range n {
			if ranked(at) && q.positives[id(at)] && fused[at] > best {
				best, found = fused[at], true
			}
		}
		if found {
			rank := 1
			for at := range n {
				if ranked(at) && !q.positives[id(at)] && fused[at] >= best {
					rank++
				}
			}
			out[i] = 1 / float64(rank)
		}
	}
	return out
}

// resize returns s with n zero elements, reusing its storage.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}
