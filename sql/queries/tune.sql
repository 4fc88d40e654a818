-- Tuning TDWA weights from labels (internal/tune, docs/profiles.md#tuning-weights-from-labels).

-- name: LabelledSearches :many
-- The labels of the most recent labelled searches since a time, one row per (search, tool
-- still in the catalog): the searches' query text and the labelled tools' ids. A label whose
-- call or feedback said the tool failed (success = false) does not count: the agent chose
-- the tool, but it did not serve the request. Labels of tools deleted since are left out.
--
-- One search key contributes at most max_per_key searches (its most recent), so that a
-- tenant flooding searches and feedback cannot outweigh the others in what the tune trains
-- and evaluates on. Searches without a key (the operator's) or with an admin key (which can
-- set weights itself) are not capped. key_id is the capped key (0: a trusted search).
WITH labelled AS (
    SELECT DISTINCT x.search_id, x.search_created_at
    FROM search_labels x
    WHERE x.search_created_at >= sqlc.arg(since)::timestamptz AND x.success IS DISTINCT FROM false
), ranked AS (
    SELECT a.search_id, a.search_created_at, c.key_id,
           row_number() OVER (PARTITION BY c.key_id ORDER BY a.search_created_at DESC, a.search_id DESC) AS nth
    FROM labelled a
    JOIN search_log l ON l.id = a.search_id AND l.created_at = a.search_created_at
    LEFT JOIN api_keys k ON k.id = l.caller_key_id
    CROSS JOIN LATERAL (SELECT CASE WHEN k.scope = 'admin' THEN NULL ELSE l.caller_key_id END AS key_id) c
    -- a search by OAuth access token has no key to cap: it is left out (docs/auth.md#oauth)
    WHERE NOT toolgate_token_search(l.caller)
), s AS (
    SELECT search_id, search_created_at, key_id
    FROM ranked
    WHERE key_id IS NULL OR nth <= sqlc.arg(max_per_key)::int
    ORDER BY search_created_at DESC, search_id DESC
    LIMIT sqlc.arg(max_searches)::int
)
SELECT l.id AS search_id, l.query, t.id AS tool_id, coalesce(s.key_id, 0)::bigint AS key_id
FROM s
JOIN search_log l ON l.id = s.search_id AND l.created_at = s.search_created_at
JOIN search_labels x ON x.search_id = s.search_id AND x.search_created_at = s.search_created_at
                    AND x.success IS DISTINCT FROM false
JOIN tools t ON t.name = x.tool_name
GROUP BY l.id, l.query, t.id, s.key_id
ORDER BY l.id, t.id;

-- name: CreateTune :one
INSERT INTO profile_tunes (profile, baseline, options) VALUES ($1, $2, $3) RETURNING *;

-- name: GetTune :one
SELECT * FROM profile_tunes WHERE id = $1;

-- name: LockTune :one
SELECT * FROM profile_tunes WHERE id = $1 FOR UPDATE;

-- name: ListTunes :many
SELECT * FROM profile_tunes ORDER BY id DESC LIMIT $1;

-- name: TuneRunning :exec
UPDATE profile_tunes SET state = 'running', phase = NULL, done = 0, total = 0, error = NULL
WHERE id = $1 AND state <> 'succeeded';

-- name: TuneProgress :exec
UPDATE profile_tunes SET phase = $2, done = $3, total = $4 WHERE id = $1;

-- name: TuneSucceeded :exec
UPDATE profile_tunes SET state = 'succeeded', phase = NULL, result = $2, error = NULL, finished_at = now()
WHERE id = $1;

-- name: TuneFailed :exec
UPDATE profile_tunes SET state = 'failed', error = $2, finished_at = now()
WHERE id = $1 AND state <> 'succeeded';

-- name: InsertTunedProfile :one
-- A tuned profile is always a new one: an existing profile of that name is never changed
-- (no row comes back).
INSERT INTO weight_profiles (name, strategy, weights, tune_id, weight_lexical, weight_vector)
VALUES ($1, 'tdwa', $2, $3, sqlc.arg(weight_lexical)::float8, sqlc.arg(weight_vector)::float8)
ON CONFLICT (name) DO NOTHING
RETURNING id;

-- name: TdwaProfileWeights :many
-- The weights of every TDWA profile, as starting points of the weight search.
SELECT name, weights FROM weight_profiles WHERE strategy = 'tdwa' ORDER BY name;

-- name: CountAllTools :one
SELECT count(*) FROM tools;

-- name: GetActiveProfile :one
SELECT * FROM weight_profiles WHERE is_active;

-- name: TuneEvidence :one
-- What the tune that made a profile measured, for the profile's view.
SELECT id, baseline, coalesce(result -> 'gain', 'null')::jsonb AS gain, coalesce(result -> 'labels', 'null')::jsonb AS labels
FROM profile_tunes WHERE id = $1;

-- name: TuneLexicalScores :many
-- The lexical branch of each labelled query, for scoring the fused ranking: per text (ord,
-- 1-based) the `top` tools with the best BM25 over the text's terms, computed as the search
-- computes it (toolgate_bm25_idf and toolgate_bm25_term over the tool's document, at the
-- corpus's average length). As in the search, the postings' impacts (the term weights at the
-- average length of when they were written) only choose the candidates: the 2 × top best by
-- Σ idf · impact are scored exactly. Every posting of the texts' terms is read (the search
-- bounds that work; a tune reads a few thousand queries, once).
WITH q AS (
    SELECT DISTINCT v.ord::int AS ord, u.lexeme
    FROM unnest(sqlc.arg(texts)::text[]) WITH ORDINALITY AS v (txt, ord),
         toolgate_query_lexemes(v.txt) AS u (lexeme) -- analysed as the search analyses it
), corpus AS (
    SELECT c.n, c.avgdl FROM toolgate_bm25_corpus(NULL) AS c (n, avgdl, seen)
), t AS (
    SELECT q.ord, q.lexeme, toolgate_bm25_idf(c.n, l.df) AS idf
    FROM q
    JOIN search_lexemes l ON l.lexeme = q.lexeme AND l.df > 0
    CROSS JOIN corpus c
), cand AS (
    SELECT x.ord, x.tool_id
    FROM (SELECT t.ord, p.tool_id,
                 row_number() OVER (PARTITION BY t.ord ORDER BY sum(t.idf * p.impact) DESC, p.tool_id) AS r
          FROM t
          JOIN search_postings p ON p.lexeme = t.lexeme
          GROUP BY t.ord, p.tool_id) x
    WHERE x.r <= 2 * sqlc.arg(top)::int
), s AS (
    SELECT c.ord, c.tool_id, sum(t.idf * toolgate_bm25_term(d.tfs[u.i], d.doc_len, co.avgdl)) AS bm25
    FROM cand c
    JOIN search_docs d ON d.tool_id = c.tool_id
    CROSS JOIN LATERAL unnest(d.lexemes) WITH ORDINALITY AS u (lexeme, i)
    JOIN t ON t.ord = c.ord AND t.lexeme = u.lexeme
    CROSS JOIN corpus co
    GROUP BY c.ord, c.tool_id
)
SELECT x.ord::int AS ord, x.tool_id, x.bm25::float8 AS bm25
FROM (SELECT s.*, row_number() OVER (PARTITION BY s.ord ORDER BY s.bm25 DESC, s.tool_id) AS r FROM s) x
WHERE x.r <= sqlc.arg(top)::int
ORDER BY x.ord, x.r;

-- name: TuneMeaningScores :many
-- The meaning branch's cosine of a labelled query's meaning and each of the given tools' (a
-- tool without a stored meaning has no row), for scoring the fused ranking.
SELECT m.tool_id, (-(m.meaning <#> sqlc.arg(meaning)::sparsevec))::float8 AS sim
FROM tool_meanings m
WHERE m.tool_id = ANY (sqlc.arg(ids)::bigint[]);

-- name: TuneFuse :many
-- The fused scores of a batch of labelled queries' candidate lists under one weighting
-- (internal/tune): toolgate_fuse, the search statement's own fusion, one group per query.
SELECT f.grp::int AS grp, f.tool_id::bigint AS tool_id, f.score::float8 AS score
FROM toolgate_fuse(sqlc.arg(grps)::int[], sqlc.arg(branches)::text[], sqlc.arg(variants)::int[],
                   sqlc.arg(tool_ids)::bigint[], sqlc.arg(ranks)::bigint[], sqlc.arg(scores)::float8[],
                   sqlc.arg(weights)::float8[], sqlc.arg(method)::text, sqlc.arg(k_rrf)::float8,
                   sqlc.arg(vec_confidence)::float8)
     AS f (grp, tool_id, score, lexical_rank, vector_rank, bm25, lexical_share, vector_share, meaning_share,
           lexical_texts, vector_texts);
