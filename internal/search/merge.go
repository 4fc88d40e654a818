package search

import (
	"context"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/plan"
	"github.com/toolgate/toolgate/internal/rerank"
)

// merged is the final list of a planned or reranked search: its rows in order, the intent
// (0-based) that placed each, and the reranker's scores by tool name.
type merged struct {
	rows    []db.SearchRow
	intents []int
	scores  map[string]float64
}

// mergeRerank builds one list of n candidates from the per-intent rankings of rows
// (plan.Merge: every intent gets its share), then reranks them into r.K (rerank.Apply, bounded
// by the rerank timeout; on failure the merged order stands). The Decision is nil when
// reranking was not asked for.
func (s *Service) mergeRerank(ctx context.Context, pr *prepared, rows []db.SearchRow) (merged, *rerank.Decision) {
	r, p, rerankOn, intents, n := pr.req, pr.plan, pr.rerankOn, pr.intents, pr.n
	perIntent := make([][]plan.Ranked, intents)
	byName := map[string]db.SearchRow{}
	for _, row := range rows {
		if row.Name == nil || row.Grp < 1 || int(row.Grp) > intents {
			continue
		}
		perIntent[row.Grp-1] = append(perIntent[row.Grp-1], plan.Ranked{ID: *row.Name, Score: row.Score})
		if prev, ok := byName[*row.Name]; !ok || row.Score > prev.Score {
			byName[*row.Name] = row
		}
	}
	list := plan.Merge(n, perIntent)
	docs := make([]rerank.Doc, len(list))
	intentOf := make(map[string]int, len(list))
	for i, m := range list {
		row := byName[m.ID]
		docs[i] = rerank.Doc{ID: m.ID, Text: m.ID + ": " + deref(row.Description), Score: m.Score}
		intentOf[m.ID] = m.Intent
	}
	query := r.Query
	if p != nil {
		query = p.Rewritten
	}
	var reranker rerank.Reranker
	if rerankOn {
		reranker = s.settings.Reranker
	}
	final, decision := rerank.Apply(ctx, reranker, query, docs, r.K, s.settings.RerankTimeout)
	out := merged{scores: map[string]float64{}}
	for _, sc := range decision.Scores {
		out.scores[sc.ID] = sc.Score
	}
	for i, d := range final {
		row := byName[d.ID]
		row.Score, row.Pos = d.Score, int32(i+1)
		out.rows = append(out.rows, row)
		out.intents = append(out.intents, intentOf[d.ID])
	}
	if !rerankOn {
		return out, nil
	}
	if !decision.Applied && decision.Fallback != "" {
		s.log.WarnContext(ctx, "rerank fell back to the fused ranking", "reranker", decision.Reranker, "reason", decision.Fallback, "err", decision.Err)
	}
	return out, &decision
}
