package tune

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/db"
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
// weight. The BM25 scores do not depend on anything a tune changes; they are read once
// (TuneLexicalScores). Name matches and query plans are left out: this is the plain search
// of the labelled query.

// lexicalTop is how many tools per labelled query keep their BM25: the lexical list and the
// vector candidates that join it (a vector candidate outside them counts as no lexical match).
const lexicalTop = 200

// lexicalBatch is how many query texts one TuneLexicalScores call reads.
const lexicalBatch = 100

// fusionConfig is how the service fuses: the method, the reciprocal rank constant and the
// candidates per branch (search.Settings).
type fusionConfig struct {
	method search.Fusion
	kRRF   float64
	cand   int
}

func fusionOf(st search.Settings) fusionConfig {
	return fusionConfig{method: cmp.Or(st.Fusion, search.FusionRRF), kRRF: st.KRRF, cand: max(st.Candidates, 1)}
}

// lexScore is a tool's BM25 for a query.
type lexScore struct {
	id   int64
	bm25 float64
}

// lexicalScores reads the lexical branch of each distinct query text: texts[i]'s tools by
// BM25, best first.
func lexicalScores(ctx context.Context, pool *pgxpool.Pool, texts []string) ([][]lexScore, error) {
	out := make([][]lexScore, len(texts))
	q := db.New(pool)
	for i := 0; i < len(texts); i += lexicalBatch {
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

func statsOf(scores []float64) listStats {
	st := listStats{n: len(scores), mx: math.Inf(-1), mn: math.Inf(1)}
	for _, s := range scores {
		st.mx, st.mn = max(st.mx, s), min(st.mn, s)
		st.mu += s
	}
	st.mu /= float64(len(scores))
	for _, s := range scores {
		st.sd += (s - st.mu) * (s - st.mu)
	}
	st.sd = math.Sqrt(st.sd / float64(len(scores)))
	return st
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

// scored is a tool with a score, for sorting lists.
type scored struct {
	id    int64
	score float64
}

func byScore(a, b scored) int { return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.id, b.id)) }

// reciprocalRanks returns, for each query of split, 1/rank of its best-ranked labelled tool
// in the fused ranking under wt (0 when no labelled tool is a candidate of either branch).
// A tool that ties with the labelled one ranks before it: a weighting gets no credit for a
// tie.
func (m *model) reciprocalRanks(wt weighting, split []int) []float64 {
	norms := make([]float64, len(m.tools))
	done := make([]bool, len(m.tools))
	out := make([]float64, len(split))
	for i, qi := range split {
		q := &m.queries[qi]
		sims := make(map[int64]float64, len(q.pool))
		var vec []scored
		for _, c := range q.pool {
			t := &m.tools[c.tool]
			if !done[c.tool] {
				norms[c.tool], done[c.tool] = t.norm(wt), true
			}
			if s, ok := score(c, t, wt, norms[c.tool]); ok {
				sims[t.id] = s
				vec = append(vec, scored{t.id, s})
			}
		}
		slices.SortFunc(vec, byScore)
		vec = vec[:min(len(vec), m.fusion.cand)]
		lex := make([]scored, 0, m.fusion.cand)
		for _, l := range q.lexical[:min(len(q.lexical), m.fusion.cand)] {
			lex = append(lex, scored{l.id, l.bm25})
		}
		if m.fusion.method != search.FusionRRF {
			// each list also scores the other's candidates
			inLex := make(map[int64]bool, len(lex))
			for _, l := range lex {
				inLex[l.id] = true
			}
			inVec := make(map[int64]bool, len(vec))
			for _, v := range vec {
				inVec[v.id] = true
			}
			for _, v := range vec {
				if b, ok := q.bm25[v.id]; ok && !inLex[v.id] {
					lex = append(lex, scored{v.id, b})
				}
			}
			for _, l := range lex[:min(len(lex), m.fusion.cand)] {
				if s, ok := sims[l.id]; ok && !inVec[l.id] {
					vec = append(vec, scored{l.id, s})
				}
			}
			slices.SortFunc(lex, byScore)
			slices.SortFunc(vec, byScore)
		}
		fused := map[int64]float64{}
		for _, list := range []struct {
			l []scored
			w float64
		}{{lex, wt.wl}, {vec, wt.wv}} {
			if len(list.l) == 0 {
				continue
			}
			scores := make([]float64, len(list.l))
			for j, c := range list.l {
				scores[j] = c.score
			}
			st := statsOf(scores)
			for j, c := range list.l {
				fused[c.id] += list.w * m.fusion.share(c.score, j+1, st)
			}
		}
		best, found := math.Inf(-1), false
		for id, s := range fused {
			if q.positives[id] && s > best {
				best, found = s, true
			}
		}
		if !found {
			continue
		}
		rank := 1
		for id, s := range fused {
			if !q.positives[id] && s >= best {
				rank++
			}
		}
		out[i] = 1 / float64(rank)
	}
	return out
}
