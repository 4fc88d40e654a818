-- name: Search :many
-- The whole search in one read-only statement: a bounded Okapi BM25 lexical branch, a
-- pgvector HNSW cosine branch, the meaning branch, fusion over the branches and every query
-- variant (docs/search.md#fusion), exact tool-name matches first. It writes nothing, so it
-- runs unchanged on the primary and on a read replica; the retrieval log row is written
-- afterwards by InsertSearchLogs, once the final ranking is known (internal/search). Run it in
-- a transaction prepared by SearchSetConfig (jit, plan cache mode, statement timeout, HNSW
-- iterative scans and ef_search, all set with set_config(..., true)). The formulas it
-- computes with have their one home in sql/functions: BM25 in bm25.sql (toolgate_bm25_idf,
-- toolgate_bm25_term), fusion in fusion.sql (toolgate_fuse).
--
--   src      the source ids the request may see: the request's `sources` filter intersected
--            with the caller's allowed sources (NULL = no restriction). Every branch reads it.
--   corpus   N and the average document length of the lexical index: over every source, or
--            for a caller restricted to some sources, over those alone (seen: their ids),
--            so that nothing it computes depends on a tool the caller cannot see.
--   tg       the intents (1-based) each text serves, as pairs text_variants[i] →
--            text_groups[i]: texts and vecs are the distinct texts of every intent (or
--            empty), each searched once, its rankings counted for each intent it serves.
--            Without a query plan every text is intent 1 and the statement is the plain search.
--   qterms   the distinct lexemes of each lexical query variant (toolgate_query_lexemes:
--            stemmed and stop words out by english and every other language corpus's
--            sources hold, and the character pairs of Chinese/Japanese/Korean), its words'
--            synonyms appended first (toolgate_with_synonyms: the global ones and the
--            caller's tenant's, docs/curations.md).
--   qdf      their document frequency (NULL: no tool has the lexeme), in corpus's sources.
--   terms    the known ones with their BM25 idf (toolgate_bm25_idf), numbered
--            from the rarest (rarity 1) per variant, with the postings the terms up to this
--            one fetch at most (spent: Σ min(df, postings), from the rarest).
--   fetched  the bounded work of the lexical branch: per variant, the top `postings` postings
--            by precomputed impact (index-only scan of search_postings_impact, allowed
--            sources only) of its `lexical_terms` rarest terms, and of the next ones while
--            spent stays within the budget lexical_terms × postings (rare terms have short
--            posting lists: what they leave of the budget goes to more terms), each with its
--            share idf·impact of a partial score. A long query's common words choose no
--            candidates, so this work stops growing with the query's length.
--   shortlist per variant, the `shortlist` tools with the best partial scores (tags filter
--            applied): the only ones scored exactly; with a score fusion, also the vector
--            and memory branches' candidates.
--   lex      Okapi BM25 of the shortlisted tools over ALL the variant's terms, computed exactly
--            from the tool's document (search_docs: sorted lexemes and term frequencies, one
--            row read per tool), Σ idf · toolgate_bm25_term(tf, dl, avgdl), ranked per
--            variant.
--   exp      the running A/B experiment (docs/experiments.md) and this search's arm, for a
--            search that names no profile and runs the vector branch (else no row): the
--            candidate when toolgate_ab_bucket(experiment, unit) < share, else the control.
--            The unit is toolgate_ab_unit: the caller ('key:' || caller_key_id, else
--            'caller:' || caller), and for unit 'session' the search's session after it;
--            experiments.UnitValue says the same in Go.
--   pset     the vector set, name and fusion weights of the requested profile, else of the
--            experiment arm's profile, else of the active one: the profile that served the
--            search.
--   vec      per query vector, HNSW cosine KNN over that set, keeping the searchable tools of
--            allowed sources and tags (a correlated filter on the index scan; iterative scans
--            keep going until `cand` rows passed it), ranked by distance.
--   mten     the tenants whose memories the search reads (docs/learning.md): the operator's
--            ('') and the caller's (the tenant parameter, auth.Caller.Tenant as
--            authentication read it: a search key's api_keys.tenant, else 'key:' || id; a
--            search token's tenant claim; NULL for an admin key or token, a keyless search
--            and a search token without the claim; it also picks the curation rules and the
--            synonyms), each with how to scan it: exactly when the memory
--            sweep counted at most memory_exact memories of it (tool_memory_tenants; none
--            counted: exactly), else through the HNSW index; and how many lists the sweep
--            split its memories into (0: none).
--   mem      the memory branch (w_memory > 0): per query vector, its memory_k nearest
--            memories of those tenants (the queries of past searches an agent then used a
--            tool of), kept from memory_min_sim similarity on, of searchable tools of allowed
--            sources and tags; per tool its best similarity. Per tenant one of two scans
--            runs, by a one-time filter on mten.exact. A small tenant (the HNSW walk would
--            step past every other tenant's nearer memories): its rows of the lists whose
--            centroids are nearest the query vector (a quarter of its lists, rounded up)
--            and of list -1 (memories not in a list yet; every memory of a tenant without
--            lists), through the b-tree on tenant and list, every cosine distance computed
--            as 1 − the inner product of unit vectors. A large one: the HNSW cosine KNN
--            filtered by tenant. The memory_k nearest of their union are kept. Nothing
--            another tenant taught is read.
--   dem      negative evidence (w_demotion > 0, docs/learning.md#negative-evidence): per tool,
--            the factor 1 / (1 + w_demotion × Σ max(ignored + failed − used, 0)) over the
--            caller's tenant's and the operator's rows of tool_demotions (the memory sweep's);
--            top multiplies the fused score by it.
--   qnames   the name keys the query and each variant name, per intent: the keys of their
--            identifier-form words and of the whole text without request words ("use the
--            search tool" → "search"), computed in Go (internal/search/names.go).
--   anyname  searchable tools whose namespaced or original name key is one of them.
--   named    those per intent, with the longest matching key.
--   vecx     with a score fusion (minmax, dbsf), the cosine similarity of the lexical
--            candidates the vector branch did not return (the vector candidates join the
--            shortlist, so they get their exact BM25 in lex).
--   mng      the meaning branch (w_meaning > 0, one vector per lexical text in meanings, or
--            none): the cosine of the meanings (internal/meaning) of each text and of each
--            candidate of the text's other lists (lexical and vector), one primary-key
--            lookup each. It re-scores those candidates, it brings none of its own
--            (docs/search.md#meaning).
--   wb       the fusion weights of the branches: the profile's, else the settings' w_lex and
--            w_vec. With vec_confidence τ > 0, a vector list whose best similarity m is below
--            τ weighs w_vec · m / τ (a branch that found nothing close has less say).
--   branches each branch's candidates per text (l lexical, v vector, m meaning, r memory)
--            with their rank, score and branch weight, once per intent the text serves. A
--            memory list weighs w_memory times its best similarity (a request only loosely
--            like a past one is steered less).
--   fused    per intent, toolgate_fuse (sql/functions/fusion.sql): the sum over branches and
--            the intent's texts of each candidate's share of each list, by the fusion method;
--            best rank per branch and best BM25 score over the texts; for explanations
--            (SearchExplain), the sum per branch and the texts whose lists held the
--            candidate, per branch. Named tools no list held join with score 0.
--   rules    the curation rules the request's query matches (toolgate_search_rules: the global
--            ones and the caller's tenant's, docs/curations.md), with their tools' ids.
--   cur      per tool they act on: hidden (hide wins), the product of its boosts, its pin
--            position (the smallest), and the rules that acted, for explanations.
--   pinned   per intent, the pinned tools a search may return (searchable, of an allowed
--            source and tag), whether a list held them or not.
--   top      per intent the top `per_group`: hidden tools out; pinned tools at their
--            positions; the others in the places left, name matches first (longest match
--            first), then by fused score times their boost.
--   ranked   those joined to tools, enabled, approved and of an allowed source (checked
--            again, cheaply: the lexical index only holds searchable tools).
-- The final SELECT returns one row per result and intent, or, when nothing matched, one row
-- whose result columns are NULL or 0, every row carrying the experiment arm
-- (NULL when the search is in no experiment), and the profile that served the search and
-- the vector set it read (pset; '' and 0 when there is none: no profile is active), and the
-- fusion weights it used (wb); memory_share is the memory branch's part of a score; rules
-- the curation rules that pinned or boosted the result (NULL: none); demotion the factor of
-- dem (1: none).
WITH src AS MATERIALIZED (
    SELECT s.id FROM sources s
    WHERE (sqlc.narg(sources)::text[] IS NULL OR s.name = ANY (sqlc.narg(sources)::text[]))
      AND (sqlc.narg(allowed)::text[] IS NULL OR s.name = ANY (sqlc.narg(allowed)::text[]))
), corpus AS (
    -- the statistics this caller scores with (toolgate_bm25_corpus: its allowed sources',
    -- else the corpus's)
    SELECT c.n, c.avgdl, c.seen FROM toolgate_bm25_corpus(sqlc.narg(allowed)::text[]) AS c (n, avgdl, seen)
), tg AS (
    -- which intents each text serves (a text shared by several intents is searched once)
    SELECT t.variant, (sqlc.arg(text_groups)::int[])[t.ord] AS grp
    FROM unnest(sqlc.arg(text_variants)::int[]) WITH ORDINALITY AS t (variant, ord)
), exp AS (
    SELECT e.id, x.arm, p.name AS profile
    FROM profile_experiments e
    CROSS JOIN LATERAL (
        SELECT CASE WHEN toolgate_ab_bucket(e.id,
                             toolgate_ab_unit(e.unit, sqlc.narg(session_id)::text, sqlc.narg(caller_key_id)::bigint,
                                              sqlc.narg(caller)::text)) < e.share
                    THEN 'candidate' ELSE 'control' END AS arm
    ) x
    JOIN weight_profiles p ON p.id = CASE x.arm WHEN 'candidate' THEN e.candidate_profile_id ELSE e.control_profile_id END
    WHERE e.stopped_at IS NULL
      AND sqlc.narg(profile)::text IS NULL
      AND cardinality(sqlc.arg(vecs)::vector[]) > 0
), pset AS (
    SELECT wp.current_set, wp.name, wp.weight_lexical, wp.weight_vector FROM weight_profiles wp
    WHERE CASE WHEN sqlc.narg(profile)::text IS NOT NULL THEN wp.name = sqlc.narg(profile)::text
               WHEN EXISTS (SELECT 1 FROM exp) THEN wp.name = (SELECT profile FROM exp)
               ELSE wp.is_active END
), vec AS (
    SELECT q.ord AS variant, n.tool_id, 1 - n.dist AS sim,
           row_number() OVER (PARTITION BY q.ord ORDER BY n.dist, n.tool_id) AS rank
    FROM unnest(sqlc.arg(vecs)::vector[]) WITH ORDINALITY AS q (v, ord)
    CROSS JOIN LATERAL (
        SELECT tv.tool_id, tv.embedding <=> q.v AS dist
        FROM tool_vectors tv
        WHERE tv.set_id = (SELECT current_set FROM pset)
          -- a correlated filter, not a join: the planner cannot start from search_docs and
          -- must walk the HNSW index (NULL for a tool that is not searchable)
          AND (SELECT d.source_id IN (SELECT id FROM src)
                      AND (sqlc.narg(tags)::text[] IS NULL OR d.tags && sqlc.narg(tags)::text[])
               FROM search_docs d WHERE d.tool_id = tv.tool_id)
        ORDER BY tv.embedding <=> q.v
        LIMIT sqlc.arg(cand)::int
    ) n
), mten AS (
    SELECT t.tenant, coalesce(c.memories, 0) <= sqlc.arg(memory_exact)::int AS exact, coalesce(c.lists, 0) AS lists
    FROM (SELECT ''::text AS tenant UNION ALL SELECT sqlc.narg(tenant)::text WHERE sqlc.narg(tenant)::text IS NOT NULL) t
    LEFT JOIN tool_memory_tenants c ON c.tenant = t.tenant
    WHERE sqlc.arg(w_memory)::float8 > 0
), mem AS (
    SELECT n.variant, n.tool_id, max(n.sim) AS sim
    FROM (
        SELECT q.ord AS variant, x.tool_id, 1 - x.dist AS sim,
               row_number() OVER (PARTITION BY q.ord ORDER BY x.dist) AS r
        FROM unnest(sqlc.arg(vecs)::vector[]) WITH ORDINALITY AS q (v, ord)
        CROSS JOIN LATERAL (SELECT l2_normalize(q.v)::halfvec AS unit, q.v::halfvec AS h OFFSET 0) u
        CROSS JOIN mten t
        CROSS JOIN LATERAL (
            -- the lists the exact scan reads: -1, and the nearest quarter of the tenant's
            SELECT ARRAY(SELECT l.list FROM tool_memory_lists l
                         WHERE t.exact AND l.tenant = t.tenant
                         ORDER BY l.centroid <#> u.unit
                         LIMIT (t.lists + 3) / 4) || -1 AS probe
        ) p
        CROSS JOIN LATERAL (
            -- one of the two runs per tenant (t.exact is a one-time filter): a small
            -- tenant's rows of those lists from the b-tree on tenant and list that holds
            -- their tool and embedding (toolgate_index_memories; through the table past
            -- 1,024 dimensions), every
            -- distance computed once (behind OFFSET 0, so that the order is not one the
            -- HNSW index serves), as 1 − the inner product: the stored embeddings are unit
            -- vectors (toolgate_unit_memory), at half precision as the query's here, so
            -- this is their cosine distance without the two norms the cosine sums ...
            (SELECT e.tool_id, e.dist
             FROM (SELECT m.tool_id, 1 + (m.embedding <#> u.unit) AS dist
                   FROM tool_memories m
                   WHERE t.exact AND m.tenant = t.tenant AND m.list = ANY (p.probe) AND m.embedding IS NOT NULL
                   OFFSET 0) e
             ORDER BY e.dist
             LIMIT sqlc.arg(memory_k)::int)
            UNION ALL
            -- ... a large one's by the HNSW walk (cosine), filtered by tenant (|| '': a
            -- condition the b-tree cannot serve, else the generic plan sorts the tenant's
            -- rows), the distance of the memories it finds taken as the exact scan takes it
            (SELECT m.tool_id, 1 + (m.embedding <#> u.unit) AS dist
             FROM tool_memories m
             WHERE NOT t.exact AND m.tenant || '' = t.tenant
             ORDER BY m.embedding <=> u.h
             LIMIT sqlc.arg(memory_k)::int)
        ) x
    ) n
    WHERE n.r <= sqlc.arg(memory_k)::int
      AND n.sim >= sqlc.arg(memory_min_sim)::float8
      AND (SELECT d.source_id IN (SELECT id FROM src)
                  AND (sqlc.narg(tags)::text[] IS NULL OR d.tags && sqlc.narg(tags)::text[])
           FROM search_docs d WHERE d.tool_id = n.tool_id)
    GROUP BY n.variant, n.tool_id
), dem AS (
    -- negative evidence (w_demotion > 0): the caller's tenant's and the operator's
    SELECT d.tool_id,
           1 / (1 + sqlc.arg(w_demotion)::float8 * sum(greatest(d.ignored + d.failed - d.used, 0))) AS factor
    FROM tool_demotions d
    WHERE sqlc.arg(w_demotion)::float8 > 0
      AND (d.tenant = '' OR d.tenant = sqlc.narg(tenant)::text)
    GROUP BY d.tool_id
), qterms AS (
    SELECT DISTINCT v.ord AS variant, u.lexeme
    FROM unnest(sqlc.arg(texts)::text[]) WITH ORDINALITY AS v (txt, ord)
    CROSS JOIN corpus c
    -- the synonyms once, behind OFFSET 0: passed as an expression, the call would be copied
    -- into every use of the text in the inlined toolgate_query_lexemes (or keep it from
    -- being inlined at all)
    CROSS JOIN LATERAL (SELECT toolgate_with_synonyms(v.txt, sqlc.narg(tenant)::text) AS txt OFFSET 0) s
    CROSS JOIN LATERAL toolgate_query_lexemes(s.txt, c.seen) AS u (lexeme)
), qdf AS MATERIALIZED (
    -- a scalar subquery per term: one primary-key probe each, whatever the plan's estimates
    -- (for a restricted caller, one primary-key range: the lexeme's rows of its sources)
    SELECT q.variant, q.lexeme, toolgate_bm25_df(q.lexeme, c.seen) AS df
    FROM qterms q
    CROSS JOIN corpus c
), terms AS MATERIALIZED (
    SELECT q.variant, q.lexeme, q.df, toolgate_bm25_idf(c.n, q.df) AS idf,
           row_number() OVER w AS rarity,
           sum(least(q.df, sqlc.arg(postings)::int)) OVER w AS spent
    FROM qdf q
    CROSS JOIN corpus c
    WHERE q.df > 0
    WINDOW w AS (PARTITION BY q.variant ORDER BY q.df, q.lexeme)
), fetched AS MATERIALIZED (
    SELECT t.variant, p.tool_id, t.idf * p.impact AS part
    FROM terms t
    CROSS JOIN LATERAL (
        SELECT sp.tool_id, sp.impact FROM search_postings sp
        WHERE sp.lexeme = t.lexeme AND sp.source_id IN (SELECT id FROM src)
        ORDER BY sp.impact DESC
        LIMIT sqlc.arg(postings)::int
    ) p
    WHERE t.rarity <= sqlc.arg(lexical_terms)::int
       OR t.spent <= sqlc.arg(lexical_terms)::int * sqlc.arg(postings)::int
), shortlist AS (
    SELECT x.variant, x.tool_id
    FROM (
        SELECT f.variant, f.tool_id,
               row_number() OVER (PARTITION BY f.variant ORDER BY sum(f.part) DESC, f.tool_id) AS r
        FROM fetched f
        WHERE sqlc.narg(tags)::text[] IS NULL
           OR EXISTS (SELECT 1 FROM search_docs d WHERE d.tool_id = f.tool_id AND d.tags && sqlc.narg(tags)::text[])
        GROUP BY f.variant, f.tool_id
    ) x
    WHERE x.r <= sqlc.arg(shortlist)::int
    UNION
    -- a score-based fusion also scores the vector branch's candidates exactly (lex)
    SELECT v.variant, v.tool_id FROM vec v
    WHERE sqlc.arg(fusion)::text <> 'rrf' AND v.variant <= cardinality(sqlc.arg(texts)::text[])
    UNION
    -- and the memory branch's
    SELECT r.variant, r.tool_id FROM mem r
    WHERE sqlc.arg(fusion)::text <> 'rrf' AND r.variant <= cardinality(sqlc.arg(texts)::text[])
), lex AS (
    SELECT s.variant, s.tool_id, s.score,
           row_number() OVER (PARTITION BY s.variant ORDER BY s.score DESC, s.tool_id) AS rank
    FROM (
        SELECT m.variant, m.tool_id,
               sum(t.idf * toolgate_bm25_term(m.tf, m.doc_len, co.avgdl)) AS score
        FROM (
            SELECT s.variant, s.tool_id, d.doc_len, u.lexeme, d.tfs[u.i] AS tf
            FROM shortlist s
            -- one primary-key lookup per shortlisted tool: a lateral subquery with LIMIT is
            -- not flattened into a join, so the generic plan (which guesses thousands of
            -- shortlisted rows) cannot choose to hash the whole search_docs table instead
            CROSS JOIN LATERAL (
                SELECT sd.doc_len, sd.lexemes, sd.tfs FROM search_docs sd WHERE sd.tool_id = s.tool_id LIMIT 1
            ) d
            CROSS JOIN LATERAL unnest(d.lexemes) WITH ORDINALITY AS u (lexeme, i)
            -- only the lexemes some text has go on to the join (an enriched document holds
            -- hundreds, a query a few)
            WHERE u.lexeme IN (SELECT t.lexeme FROM terms t)
            -- a fence: each document is read and unnested once, and only then joined with
            -- the terms (not once per term of the query)
            OFFSET 0
        ) m
        JOIN terms t ON t.variant = m.variant AND t.lexeme = m.lexeme
        CROSS JOIN corpus co
        GROUP BY m.variant, m.tool_id
    ) s
), vecx AS (
    -- a score-based fusion also scores the lexical branch's candidates the vector branch did
    -- not return: their cosine similarity, one primary-key lookup each
    SELECT l.variant, l.tool_id, 1 - (tv.embedding <=> q.v) AS sim
    FROM lex l
    JOIN unnest(sqlc.arg(vecs)::vector[]) WITH ORDINALITY AS q (v, ord) ON q.ord = l.variant
    CROSS JOIN LATERAL (
        SELECT x.embedding FROM tool_vectors x
        WHERE x.set_id = (SELECT current_set FROM pset) AND x.tool_id = l.tool_id
        LIMIT 1
    ) tv
    WHERE sqlc.arg(fusion)::text <> 'rrf' AND l.rank <= sqlc.arg(cand)::int
      AND NOT EXISTS (SELECT 1 FROM vec v WHERE v.variant = l.variant AND v.tool_id = l.tool_id)
), mng AS (
    SELECT c.variant, c.tool_id, -(tm.meaning <#> q.m) AS sim
    FROM (SELECT l.variant, l.tool_id FROM lex l WHERE l.rank <= sqlc.arg(cand)::int
          UNION
          SELECT v.variant, v.tool_id FROM vec v) c
    JOIN unnest(sqlc.arg(meanings)::sparsevec[]) WITH ORDINALITY AS q (m, ord) ON q.ord = c.variant
    CROSS JOIN LATERAL (
        SELECT x.meaning FROM tool_meanings x WHERE x.tool_id = c.tool_id LIMIT 1
    ) tm
    -- a text none of whose words the lexicon knows has the zero vector: no say
    WHERE sqlc.arg(w_meaning)::float8 > 0 AND l2_norm(q.m) > 0
), qnames AS (
    -- the name keys the query names (internal/search/names.go), with their intent
    SELECT (sqlc.arg(name_groups)::int[])[q.ord] AS grp, q.key, cardinality(string_to_array(q.key, ' ')) AS len
    FROM unnest(sqlc.arg(name_keys)::text[]) WITH ORDINALITY AS q (key, ord)
), anyname AS (
    SELECT d.tool_id, d.name_keys
    FROM search_docs d
    WHERE d.name_keys && ARRAY(SELECT key FROM qnames)
      AND d.source_id IN (SELECT id FROM src)
      AND (sqlc.narg(tags)::text[] IS NULL OR d.tags && sqlc.narg(tags)::text[])
), named AS (
    SELECT q.grp, a.tool_id, max(q.len) AS len
    FROM anyname a
    JOIN qnames q ON q.key = ANY (a.name_keys)
    GROUP BY q.grp, a.tool_id
), wb AS (
    -- the fusion weights: the serving profile's, else (none, or NULL) the settings'
    SELECT coalesce((SELECT p.weight_lexical FROM pset p), sqlc.arg(w_lex)::float8) AS w_lex,
           coalesce((SELECT p.weight_vector FROM pset p), sqlc.arg(w_vec)::float8) AS w_vec
), branches AS (
    -- every branch's candidates per text with their rank, score (BM25, cosine similarity)
    -- and branch weight, once per intent the text serves
    SELECT tg.grp, b.branch, b.variant, b.tool_id, b.rank, b.score, b.wb
    FROM (
        SELECT 'l'::text AS branch, l.variant, l.tool_id, l.rank, l.score, (SELECT w_lex FROM wb) AS wb
        FROM lex l
        WHERE l.rank <= sqlc.arg(cand)::int
           OR (sqlc.arg(fusion)::text <> 'rrf' AND EXISTS (SELECT 1 FROM vec v WHERE v.variant = l.variant AND v.tool_id = l.tool_id))
        UNION ALL
        SELECT 'v', v.variant, v.tool_id, v.rank, v.sim, (SELECT w_vec FROM wb)
        FROM vec v
        UNION ALL
        SELECT 'v', x.variant, x.tool_id, NULL, x.sim, (SELECT w_vec FROM wb)
        FROM vecx x
        UNION ALL
        SELECT 'm', m.variant, m.tool_id, row_number() OVER (PARTITION BY m.variant ORDER BY m.sim DESC, m.tool_id),
               m.sim, sqlc.arg(w_meaning)::float8
        FROM mng m
        UNION ALL
        SELECT 'r', r.variant, r.tool_id, row_number() OVER (PARTITION BY r.variant ORDER BY r.sim DESC, r.tool_id),
               r.sim, sqlc.arg(w_memory)::float8 * max(r.sim) OVER (PARTITION BY r.variant)
        FROM mem r
    ) b
    JOIN tg ON tg.variant = b.variant
), fusedb AS (
    SELECT f.grp, f.tool_id, f.score, f.lexical_rank, f.vector_rank, f.bm25, f.lexical_share, f.vector_share,
           f.meaning_share, f.lexical_texts, f.vector_texts
    FROM (SELECT array_agg(b.grp) AS g, array_agg(b.branch) AS br, array_agg(b.variant::int) AS v,
                 array_agg(b.tool_id) AS t, array_agg(b.rank) AS r, array_agg(b.score) AS s, array_agg(b.wb) AS w
          FROM branches b) a
    CROSS JOIN LATERAL toolgate_fuse(a.g, a.br, a.v, a.t, a.r, a.s, a.w, sqlc.arg(fusion)::text,
                                     sqlc.arg(k_rrf)::float8, sqlc.arg(vec_confidence)::float8)
        AS f (grp, tool_id, score, lexical_rank, vector_rank, bm25, lexical_share, vector_share, meaning_share,
              lexical_texts, vector_texts)
), fused AS (
    SELECT * FROM fusedb
    UNION ALL
    -- a named tool no list held: first by its name match, with nothing to its score
    SELECT nm.grp, nm.tool_id, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
    FROM named nm
    WHERE NOT EXISTS (SELECT 1 FROM fusedb f WHERE f.grp = nm.grp AND f.tool_id = nm.tool_id)
), rules AS MATERIALIZED (
    SELECT r.id, r.action, r.boost, r.position, t.id AS tool_id
    FROM toolgate_search_rules(sqlc.arg(query)::text, sqlc.narg(tenant)::text) AS r (id, action, tool, boost, position)
    JOIN tools t ON t.name = r.tool
), cur AS (
    SELECT r.tool_id, bool_or(r.action = 'hide') AS hidden,
           coalesce(exp(sum(ln(r.boost)) FILTER (WHERE r.action = 'boost')), 1) AS boost,
           min(r.position) FILTER (WHERE r.action = 'pin') AS pin,
           jsonb_agg(jsonb_build_object('id', r.id, 'action', r.action, 'boost', r.boost, 'position', r.position)
                     ORDER BY r.id) AS acted
    FROM rules r
    GROUP BY r.tool_id
), pinned AS (
    SELECT g.grp, c.tool_id
    FROM cur c
    CROSS JOIN (SELECT DISTINCT tg.grp FROM tg) g
    WHERE c.pin IS NOT NULL AND NOT c.hidden
      AND EXISTS (SELECT 1 FROM search_docs d
                  WHERE d.tool_id = c.tool_id AND d.source_id IN (SELECT id FROM src)
                    AND (sqlc.narg(tags)::text[] IS NULL OR d.tags && sqlc.narg(tags)::text[]))
), top AS (
    SELECT * FROM (
        -- the pinned tools at their positions (the j-th pin, by position, goes after
        -- position − j of the others), the others in the places left
        SELECT y.*, row_number() OVER (PARTITION BY y.grp
                                       ORDER BY CASE WHEN y.pin IS NULL THEN y.n ELSE y.pin - y.n + 0.5 END, y.pin NULLS LAST) AS pos
        FROM (
            SELECT x.*, row_number() OVER (PARTITION BY x.grp, x.pin IS NULL
                                           ORDER BY x.pin, x.name_match DESC NULLS LAST, x.score DESC, x.tool_id) AS n
            FROM (
                SELECT f.grp, f.tool_id, f.score * coalesce(c.boost, 1) * coalesce(dm.factor, 1) AS score, f.score AS raw_score,
                       f.lexical_rank, f.vector_rank, f.bm25, nm.len AS name_match,
                       f.lexical_share, f.vector_share, f.meaning_share, f.lexical_texts, f.vector_texts,
                       c.pin, c.acted AS rules, dm.factor AS demotion
                FROM (SELECT * FROM fused
                      UNION ALL
                      -- a pinned tool no list held, with nothing to its score
                      SELECT p.grp, p.tool_id, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
                      FROM pinned p
                      WHERE NOT EXISTS (SELECT 1 FROM fused f WHERE f.grp = p.grp AND f.tool_id = p.tool_id)) f
                LEFT JOIN named nm ON nm.grp = f.grp AND nm.tool_id = f.tool_id
                LEFT JOIN cur c ON c.tool_id = f.tool_id
                LEFT JOIN dem dm ON dm.tool_id = f.tool_id
                WHERE NOT coalesce(c.hidden, false)
            ) x
        ) y
    ) z
    WHERE z.pos <= sqlc.arg(per_group)::int
), ranked AS MATERIALIZED (
    -- one primary-key lookup per ranked tool: a lateral subquery with LIMIT is not flattened
    -- into a join, so the generic plan (which guesses thousands of ranked rows) cannot choose
    -- a merge join over the whole tools table. Its only condition is the key: with the
    -- filters inside, a table without statistics yet (right after a bulk load) was read
    -- through its (source_id, original_name) index instead, every tool of the source per row.
    SELECT tp.grp, tp.tool_id, tp.score, tp.raw_score, tp.lexical_rank, tp.vector_rank, tp.bm25, tp.name_match, tp.pos,
           tp.lexical_share, tp.vector_share, tp.meaning_share, tp.lexical_texts, tp.vector_texts, tp.rules, tp.demotion,
           t.name, t.original_name, s.name AS source, t.title, t.description,
           t.input_schema, t.output_schema, t.annotations, t.content_hash
    FROM top tp
    CROSS JOIN LATERAL (
        SELECT t.name, t.original_name, t.source_id, t.title, t.description, t.enabled, t.review_state,
               t.input_schema, t.output_schema, t.annotations, t.content_hash
        FROM tools t
        WHERE t.id = tp.tool_id
        LIMIT 1
    ) t
    CROSS JOIN LATERAL (SELECT s.name FROM sources s WHERE s.id = t.source_id LIMIT 1) s
    WHERE t.enabled AND t.review_state = 'approved' AND t.source_id IN (SELECT id FROM src)
)
-- pos, ranks, name_match and bm25 are 0 when absent (no result, or not ranked by that branch);
-- a branch's share is 0 and its texts NULL when none of its lists held the tool.
SELECT coalesce(r.grp, 0)::int AS grp, coalesce(r.pos, 0)::int AS pos, coalesce(r.score, 0)::float8 AS score,
       coalesce(r.lexical_rank, 0)::int AS lexical_rank, coalesce(r.vector_rank, 0)::int AS vector_rank,
       coalesce(r.name_match, 0)::int AS name_match, coalesce(r.bm25, 0)::float8 AS bm25,
       r.name, r.original_name, r.source, r.title, r.description,
       r.input_schema, r.output_schema, r.annotations, r.content_hash,
       x.id AS experiment_id, x.arm, x.profile AS arm_profile, coalesce((SELECT p.name FROM pset p), '')::text AS profile,
       coalesce((SELECT p.current_set FROM pset p), 0)::bigint AS vector_set,
       (SELECT w.w_lex FROM wb w)::float8 AS weight_lexical, (SELECT w.w_vec FROM wb w)::float8 AS weight_vector,
       coalesce(r.lexical_share, 0)::float8 AS lexical_share, coalesce(r.vector_share, 0)::float8 AS vector_share,
       coalesce(r.meaning_share, 0)::float8 AS meaning_share,
       r.lexical_texts::int[] AS lexical_texts, r.vector_texts::int[] AS vector_texts,
       -- the fused score (before a boost) less the other branches' shares (toolgate_fuse
       -- sums every branch)
       (CASE WHEN EXISTS (SELECT 1 FROM mem m WHERE m.tool_id = r.tool_id)
             THEN greatest(r.raw_score - coalesce(r.lexical_share, 0) - coalesce(r.vector_share, 0)
                           - coalesce(r.meaning_share, 0), 0)
             ELSE 0 END)::float8 AS memory_share,
       -- the curation rules that acted on the result (pin, boost), in cur's form
       r.rules,
       -- the factor negative evidence multiplied the score by (dem; 1: none)
       coalesce(r.demotion, 1)::float8 AS demotion
FROM (SELECT 1) one
LEFT JOIN ranked r ON true
LEFT JOIN exp x ON true
ORDER BY r.grp, r.pos;

-- name: InsertSearchLogs :many
-- The retrieval log rows of answered searches, each written to the primary once its final
-- ranking is known, together with the rows of the searches that finished meanwhile: one
-- statement per batch (after SearchLogAsync: one round trip, one transaction;
-- search.logWriter), whose executor start and partition routing serve the whole batch (a
-- statement per row cost about twice the database CPU). batch is a JSON array of objects
-- keyed by search_log's column names (search.logRow): the query and its parameters, the
-- results by position, each {name, score, lexical_rank, vector_rank, bm25, name_match, and
-- with a plan intent, with a reranker rerank_score, when the memory branch scored it
-- memory_share} (search.logJSON), the rerank decision, the experiment arm and serving
-- profile the Search statement chose (its exp and pset CTEs), the answer's confidence
-- and no_good_match (search.setConfidence), and the tenant whose memories the search read
-- (auth.Caller.Tenant, '' for the operator's). Returns the new ids in the rows' order: drawn,
-- as the column's default draws them, before the insert.
WITH incoming AS MATERIALIZED (
    SELECT toolgate_search_id(nextval('search_log_id_seq')) AS id, e.ord, e.doc->>'query' AS query,
           ARRAY(SELECT jsonb_array_elements_text(coalesce(nullif(e.doc->'variants', 'null'), '[]'))) AS variants, e.doc->>'mode' AS mode,
           (e.doc->>'k')::int AS k, e.doc->'filters' AS filters, e.doc->>'profile' AS profile,
           e.doc->>'format' AS format, nullif(e.doc->'plan', 'null') AS plan, nullif(e.doc->'rerank', 'null') AS rerank,
           e.doc->'results' AS results, (e.doc->>'latency_ms')::float8 AS latency_ms, e.doc->'timings' AS timings,
           e.doc->>'caller' AS caller, (e.doc->>'caller_key_id')::bigint AS caller_key_id,
           e.doc->>'session_id' AS session_id, (e.doc->>'experiment_id')::bigint AS experiment_id,
           e.doc->>'arm' AS arm, e.doc->>'endpoint' AS endpoint,
           (e.doc->>'confidence')::float8 AS confidence, (e.doc->>'no_good_match')::boolean AS no_good_match,
           e.doc->>'tenant' AS tenant
    FROM jsonb_array_elements(sqlc.arg(batch)::jsonb) WITH ORDINALITY AS e(doc, ord)
), written AS (
    INSERT INTO search_log (id, query, variants, mode, k, filters, profile, format, plan, rerank, results,
                            result_count, top_score, latency_ms, timings, caller, caller_key_id, session_id,
                            experiment_id, arm, endpoint, confidence, no_good_match, tenant)
    SELECT i.id, i.query, i.variants, i.mode, i.k, i.filters, i.profile, i.format, i.plan, i.rerank, i.results,
           jsonb_array_length(i.results), (SELECT max((e->>'score')::float8) FROM jsonb_array_elements(i.results) e),
           i.latency_ms, i.timings, i.caller, i.caller_key_id, i.session_id, i.experiment_id, i.arm, i.endpoint,
           i.confidence, i.no_good_match, i.tenant
    FROM incoming i
)
SELECT id FROM incoming ORDER BY ord;

-- name: SearchLogAsync :exec
-- The log row is not worth a WAL flush: a crash may lose the rows of the last
-- wal_writer_delay (3 × 200 ms at most), and the search never waits for the disk.
SELECT set_config('synchronous_commit', 'off', true);

-- name: SearchSetConfig :exec
-- Per-transaction settings for Search (never session-wide: pooled connections keep session
-- settings and cached plans). JIT is off: the statement's row estimates (unnest, lateral
-- joins) are pessimistic enough to cross jit_above_cost, and compiling it costs seconds
-- for a query that runs in milliseconds. plan_cache_mode = force_generic_plan: re-planning
-- this statement of twenty-odd CTEs on every execution (custom plans) cost as much as running
-- it; the generic plan is written to be good for every parameter value (the vector branch
-- filters with a correlated subquery so that it always walks the HNSW index).
-- statement_timeout (milliseconds, '0': none) bounds the statement: a search that runs
-- longer is cancelled and answered as an outage (search.ErrStatementTimeout).
SELECT set_config('jit', 'off', true),
       set_config('plan_cache_mode', 'force_generic_plan', true),
       set_config('statement_timeout', sqlc.arg(statement_timeout)::text, true),
       set_config('hnsw.iterative_scan', 'relaxed_order', true),
       set_config('hnsw.ef_search', sqlc.arg(ef_search)::text, true);

-- name: SearchKnownSources :many
-- The names among $1 that exist and that the caller may see (allowed NULL = every source).
SELECT name FROM sources
WHERE name = ANY (sqlc.arg(names)::text[])
  AND (sqlc.narg(allowed)::text[] IS NULL OR name = ANY (sqlc.narg(allowed)::text[]));

-- name: SearchProfileExists :one
SELECT EXISTS (SELECT 1 FROM weight_profiles WHERE name = $1);

-- name: SearchLogForFeedback :one
-- Who made a search (key id, or caller name for a search without a key) and the names of
-- the tools it returned: feedback is the searcher's own, about tools it was given. Also, for
-- the metrics, the profile that served it (search_log.profile, else the active profile's).
-- The row lock serializes the feedback posts of one search, so that InsertSearchFeedback
-- (a later statement, with a later snapshot) sees the labels of the posts before it and a
-- report replacing another is not counted as a new label.
SELECT l.caller, l.caller_key_id,
       ARRAY(SELECT e ->> 'name' FROM jsonb_array_elements(l.results) e)::text[] AS names,
       coalesce(l.profile, (SELECT wp.name FROM weight_profiles wp WHERE wp.is_active), '')::text AS profile
FROM search_log l
WHERE l.id = $1
FOR NO KEY UPDATE OF l;

-- name: InsertSearchFeedback :many
-- Stores the feedback (the search_feedback_label trigger copies it into search_labels) and
-- returns, for the metrics, each tool's source and whether its feedback label is new (not a
-- report replacing an earlier one): the main query reads search_labels as it was before.
WITH fb AS (
    INSERT INTO search_feedback (search_id, tool_name, success)
    SELECT sqlc.arg(search_id)::bigint, unnest(sqlc.arg(names)::text[]), unnest(sqlc.arg(successes)::boolean[])
    RETURNING tool_name
)
SELECT fb.tool_name,
       coalesce((SELECT s.name FROM tools t JOIN sources s ON s.id = t.source_id WHERE t.name = fb.tool_name), '')::text AS tool_source,
       NOT EXISTS (SELECT 1 FROM search_labels l
                   WHERE l.search_id = sqlc.arg(search_id)::bigint AND l.tool_name = fb.tool_name
                     AND l.label_source = 'feedback') AS new_label
FROM fb;

-- name: SearchWordIDF :many
-- The BM25 idf of each word of a query in the lexical index, for the local embedder's
-- query weighting (embed.Local.EmbedWeighted): 0 for a word the text analysis drops (an
-- english stop word, a legal form: toolgate_text_vector), ln(1 + (N + 0.5) / 0.5) (the
-- rarest) for a word no tool has. With
-- the statistics the Search statement scores with: the corpus's, or for a caller restricted
-- to some sources (allowed), theirs alone.
SELECT u.word::text AS word,
       CASE WHEN x.lexemes = 0 THEN 0
            ELSE toolgate_bm25_idf(c.n, coalesce(x.df, 0)) END::float8 AS idf
FROM unnest(sqlc.arg(words)::text[]) AS u (word)
CROSS JOIN toolgate_bm25_corpus(sqlc.narg(allowed)::text[]) AS c (n, avgdl, seen)
CROSS JOIN LATERAL (
    SELECT count(*) AS lexemes, max(toolgate_bm25_df(t.lexeme, c.seen)) AS df
    FROM unnest(toolgate_text_vector('english', u.word)) AS t (lexeme, positions, weights)
) x;
