-- Fusion: how the candidate lists of the branches (lexical, vector, meaning) and of the query
-- texts become one score per tool (docs/search.md#fusion). Its one home: the search
-- statement (sql/queries/search.sql, CTE fused) and the tune's scoring of a weighting
-- (internal/tune, TuneFuse in sql/queries/tune.sql) both call toolgate_fuse.
--
-- Applied after the migrations, whole (CREATE OR REPLACE).

-- A candidate's share of one list, before the list's weight, by the fusion method:
--   rrf     1 / (k_rrf + rank)
--   minmax  (score - floor) / (max - floor) over the list of n, the floor one mean gap
--           (max - min) / (n - 1) below the min: the list's last gets 1 / n, not 0
--           (1 when all are equal)
--   dbsf    (score - (μ - 3σ)) / 6σ over the list (0.5 when all are equal)
CREATE OR REPLACE FUNCTION toolgate_fusion_share(method text, score double precision, rank bigint,
    n bigint, mx double precision, mn double precision, mu double precision, sd double precision,
    k_rrf double precision) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE method
               WHEN 'minmax' THEN CASE WHEN mx > mn THEN ((score - mn) * (n - 1) + (mx - mn)) / ((mx - mn) * n)
                                       ELSE 1 END
               WHEN 'dbsf' THEN CASE WHEN sd > 0 THEN (score - (mu - 3 * sd)) / (6 * sd) ELSE 0.5 END
               ELSE 1 / (k_rrf + rank)
           END
$$;

-- The weight of a list: its branch's weight w, and for a vector list with the vector
-- confidence τ > 0, w · min(1, m / τ), m the list's best similarity (a branch that found
-- nothing close has less say).
CREATE OR REPLACE FUNCTION toolgate_list_weight(branch text, w double precision, mx double precision,
    vec_confidence double precision) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN branch = 'v' AND vec_confidence > 0 THEN w * least(1, greatest(mx, 0) / vec_confidence)
                ELSE w END
$$;

-- The fused scores of the candidates of lists given as parallel arrays, one element per
-- candidate of a list: the group it is fused in (grps: a search's intent, a tune's labelled
-- query), its branch ('l' lexical, 'v' vector, 'm' meaning, 'r' memory), the text whose list holds it
-- (variants), the tool, its rank in the list (NULL: scored without being ranked, which only a
-- score fusion counts), its score (BM25, cosine similarity) and its branch's weight. A list
-- is the candidates of one (group, branch, variant). Per group and tool: the sum of its
-- shares weighted by their lists' weights, the best lexical and vector ranks, the best BM25,
-- the sum per branch and the texts whose lexical and vector lists held it.
CREATE OR REPLACE FUNCTION toolgate_fuse(grps int[], branches text[], variants int[], tool_ids bigint[],
    ranks bigint[], scores double precision[], weights double precision[],
    method text, k_rrf double precision, vec_confidence double precision)
RETURNS TABLE (grp int, tool_id bigint, score double precision, lexical_rank bigint, vector_rank bigint,
               bm25 double precision, lexical_share double precision, vector_share double precision,
               meaning_share double precision, lexical_texts int[], vector_texts int[])
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT s.grp, s.tool_id, sum(s.share),
           min(s.rank) FILTER (WHERE s.branch = 'l'), min(s.rank) FILTER (WHERE s.branch = 'v'),
           max(s.score) FILTER (WHERE s.branch = 'l'),
           sum(s.share) FILTER (WHERE s.branch = 'l'), sum(s.share) FILTER (WHERE s.branch = 'v'),
           sum(s.share) FILTER (WHERE s.branch = 'm'),
           array_agg(s.variant) FILTER (WHERE s.branch = 'l'), array_agg(s.variant) FILTER (WHERE s.branch = 'v')
    FROM (
        SELECT e.grp, e.tool_id, e.branch, e.variant, e.rank, e.score,
               toolgate_list_weight(e.branch, e.w, max(e.score) OVER l, vec_confidence)
               * toolgate_fusion_share(method, e.score, e.rank, count(*) OVER l, max(e.score) OVER l,
                                       min(e.score) OVER l, avg(e.score) OVER l, stddev_pop(e.score) OVER l,
                                       k_rrf) AS share
        FROM unnest(grps, branches, variants, tool_ids, ranks, scores, weights)
             AS e (grp, branch, variant, tool_id, rank, score, w)
        WINDOW l AS (PARTITION BY e.grp, e.branch, e.variant)
    ) s
    GROUP BY s.grp, s.tool_id
$$;
