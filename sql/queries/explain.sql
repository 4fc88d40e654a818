-- name: SearchExplain :many
-- Why a search ranked its results as it did (POST /search with "explain": true,
-- docs/explain.md). It runs after the Search statement, only when asked,
-- over the returned tools only. What only the ranking knows (ranks, each branch's share of
-- the fused score, which texts' candidate lists held a tool) comes from Search's rows; this
-- statement adds what the lists were scored from, with Search's own formulas (corpus, the
-- BM25 functions of sql/functions/bm25.sql, cosine similarity), so its numbers are the
-- ranking's.
--
--   names         the returned tools in order (ord = position in names).
--   lex_ords, lex_variants  pairs (returned tool, text): the texts whose lexical lists held
--                 the tool (Search's lexical_texts); vec_ords, vec_variants the same for the
--                 vector lists (vector_texts).
--   texts, vecs, allowed, tenant  Search's parameters of the same names (allowed: the caller's
--                 sources, NULL for an unrestricted caller; the statistics are those Search
--                 scored with, so an idf says nothing of a source the caller cannot see).
--   vector_set    the vector set the vector branch read (Search's vector_set: the current
--                 set, at search time, of the profile that served the search).
--
--   res      the returned tools; lp, vp the pairs.
--   qterms   the distinct lexemes of each lexical text, with its synonyms as Search reads
--            them (toolgate_with_synonyms); terms: with their idf (NULL: no tool
--            of corpus's sources has the lexeme, which scores nothing).
--   doc      each returned tool's document (search_docs), kept to the known lexemes of the
--            texts whose lexical lists held it, with their term frequency (the weighted one
--            BM25 scores).
--   lex      per such (tool, text), its BM25; sim: per (tool, text) of the vector lists, the
--            cosine similarity to the text's vector in that vector set.
--   fields   which fields of the tool's document hold each matched lexeme: the parts
--            toolgate_search_document (sql/functions/lexical.sql) builds the document from,
--            read from the tool as it is now (the index may be a moment behind a change).
-- Rows (ord: the returned tool, variant: the text), by kind:
--   'bm25'   per (tool, text) of lex: value is the BM25;
--   'sim'    per (tool, text) of sim: value is the similarity;
--   'text'   per text and lexeme of the text, known or not: the lexeme (ord 0);
--   'term'   per returned tool and matched lexeme: value is its idf, tf its term frequency,
--            fields the fields holding it (variant 0).
WITH corpus AS (
    -- Search's statistics, for the same caller's allowed sources
    SELECT c.n, c.avgdl, c.seen FROM toolgate_bm25_corpus(sqlc.narg(allowed)::text[]) AS c (n, avgdl, seen)
), res AS (
    SELECT r.ord::int AS ord, t.id AS tool_id
    FROM unnest(sqlc.arg(names)::text[]) WITH ORDINALITY AS r (name, ord)
    JOIN tools t ON t.name = r.name
), lp AS (
    SELECT x.ord::int AS ord, (sqlc.arg(lex_variants)::int[])[x.i] AS variant
    FROM unnest(sqlc.arg(lex_ords)::int[]) WITH ORDINALITY AS x (ord, i)
), vp AS (
    SELECT x.ord::int AS ord, (sqlc.arg(vec_variants)::int[])[x.i] AS variant
    FROM unnest(sqlc.arg(vec_ords)::int[]) WITH ORDINALITY AS x (ord, i)
), qterms AS (
    SELECT DISTINCT v.ord::int AS variant, u.lexeme
    FROM unnest(sqlc.arg(texts)::text[]) WITH ORDINALITY AS v (txt, ord)
    CROSS JOIN corpus c
    -- the synonyms once, behind OFFSET 0: passed as an expression, the call would be copied
    -- into every use of the text in the inlined toolgate_query_lexemes (or keep it from
    -- being inlined at all)
    CROSS JOIN LATERAL (SELECT toolgate_with_synonyms(v.txt, sqlc.narg(tenant)::text) AS txt OFFSET 0) s
    CROSS JOIN LATERAL toolgate_query_lexemes(s.txt, c.seen) AS u (lexeme)
), terms AS (
    SELECT q.variant, q.lexeme, CASE WHEN f.df > 0 THEN toolgate_bm25_idf(c.n, f.df) END AS idf
    FROM qterms q
    CROSS JOIN corpus c
    CROSS JOIN LATERAL (
        -- once per term, behind OFFSET 0 (else the call is copied into each use of df)
        SELECT toolgate_bm25_df(q.lexeme, c.seen) AS df OFFSET 0
    ) f
), doc AS (
    SELECT r.ord, d.doc_len, u.lexeme, d.tfs[u.i] AS tf
    FROM res r
    JOIN search_docs d ON d.tool_id = r.tool_id
    CROSS JOIN LATERAL unnest(d.lexemes) WITH ORDINALITY AS u (lexeme, i)
    JOIN (SELECT DISTINCT lp.ord, t.lexeme FROM lp JOIN terms t ON t.variant = lp.variant WHERE t.idf IS NOT NULL) k
      ON k.ord = r.ord AND k.lexeme = u.lexeme
), lex AS (
    SELECT m.ord, t.variant,
           sum(t.idf * toolgate_bm25_term(m.tf, m.doc_len, co.avgdl)) AS bm25
    FROM doc m
    JOIN lp ON lp.ord = m.ord
    JOIN terms t ON t.variant = lp.variant AND t.lexeme = m.lexeme
    CROSS JOIN corpus co
    GROUP BY m.ord, t.variant
), sim AS (
    SELECT r.ord, vp.variant, 1 - (tv.embedding <=> q.v) AS sim
    FROM res r
    JOIN vp ON vp.ord = r.ord
    JOIN unnest(sqlc.arg(vecs)::vector[]) WITH ORDINALITY AS q (v, ord) ON q.ord = vp.variant
    JOIN tool_vectors tv ON tv.set_id = sqlc.arg(vector_set)::bigint AND tv.tool_id = r.tool_id
), fields AS (
    SELECT r.ord, f.pos, (ARRAY['name', 'title', 'questions', 'observed', 'topics', 'tags', 'function',
                                'description', 'when_to_use', 'parameters', 'gloss', 'expansion'])[f.pos] AS field, u.lexeme
    FROM res r
    JOIN tools t ON t.id = r.tool_id
    CROSS JOIN LATERAL unnest(ARRAY[
        toolgate_name_words(toolgate_name_key(t.name)),
        t.title,
        (SELECT string_agg(c.text, ' ') FROM tool_components c WHERE c.tool_id = t.id AND c.kind = 'question'),
        (SELECT string_agg(c.text, ' ') FROM tool_components c WHERE c.tool_id = t.id AND c.kind = 'observed'),
        (SELECT string_agg(c.text, ' ') FROM tool_components c WHERE c.tool_id = t.id AND c.kind = 'topics'),
        (SELECT string_agg(c.text, ' ') FROM tool_components c WHERE c.tool_id = t.id AND c.kind = 'profile_tags'),
        (SELECT string_agg(c.text, ' ') FROM tool_components c WHERE c.tool_id = t.id AND c.kind = 'profile_function'),
        t.description,
        (SELECT string_agg(c.text, ' ') FROM tool_components c WHERE c.tool_id = t.id AND c.kind = 'profile_when_to_use'),
        (SELECT string_agg(toolgate_name_key(p.key) || ' ' || coalesce(p.value ->> 'description', ''), ' ')
         FROM jsonb_each(CASE WHEN jsonb_typeof(t.input_schema -> 'properties') = 'object'
                              THEN t.input_schema -> 'properties' ELSE '{}'::jsonb END) p),
        (SELECT string_agg(c.text, ' ') FROM tool_components c WHERE c.tool_id = t.id AND c.kind = 'gloss'),
        (SELECT string_agg(c.text, ' ') FROM tool_components c WHERE c.tool_id = t.id AND c.kind = 'expansion')
    ]) WITH ORDINALITY AS f (txt, pos)
    -- each field analysed in english and in the tool's language (identifiers are english)
    CROSS JOIN LATERAL (SELECT DISTINCT x.lexeme
                        FROM (SELECT 'english'::regconfig AS cfg UNION SELECT d.language::regconfig
                              FROM search_docs d WHERE d.tool_id = r.tool_id) c,
                             unnest(toolgate_text_vector(c.cfg, coalesce(f.txt, ''))) AS x (lexeme, positions, weights)) u
    JOIN doc m ON m.ord = r.ord AND m.lexeme = u.lexeme
    -- parsing the fields is most of this statement's work: only for lexically ranked tools
    WHERE EXISTS (SELECT 1 FROM lp WHERE lp.ord = r.ord)
)
SELECT 'bm25'::text AS kind, l.ord::int AS ord, l.variant::int AS variant, ''::text AS lexeme, l.bm25::float8 AS value,
       0::real AS tf, NULL::text[] AS fields
FROM lex l
UNION ALL
SELECT 'sim', s.ord, s.variant, '', s.sim, 0, NULL
FROM sim s
UNION ALL
SELECT 'text', 0, q.variant, q.lexeme, 0, 0, NULL
FROM qterms q
UNION ALL
SELECT 'term', m.ord, 0, m.lexeme, i.idf, m.tf, f.fields
FROM doc m
JOIN (SELECT DISTINCT t.lexeme, t.idf FROM terms t WHERE t.idf IS NOT NULL) i ON i.lexeme = m.lexeme
LEFT JOIN (SELECT f.ord, f.lexeme, array_agg(f.field ORDER BY f.pos) AS fields FROM fields f GROUP BY f.ord, f.lexeme) f
  ON f.ord = m.ord AND f.lexeme = m.lexeme
ORDER BY 1, 2, 3, 4;

-- name: SearchToolStatus :many
-- What a "why not?" answer (POST /search with explain_tools, docs/explain.md#why-not) says of
-- a named tool besides its ranking: of each name among names that is a tool of a source the
-- caller may see (allowed NULL = every source; any other name gets no row, so a tool of a
-- source the caller cannot see reads exactly as a name no tool has), whether it is enabled
-- and approved, whether the request's sources and tags filters keep it, whether the lexical
-- index holds it (searchable tools only), whether the vector set the search read has its
-- vector, and the first curation rule that hides it from this query for this caller
-- (toolgate_search_rules, as the Search statement reads them; 0: none).
SELECT t.name, t.enabled, t.review_state,
       (sqlc.narg(sources)::text[] IS NULL OR s.name = ANY (sqlc.narg(sources)::text[]))::boolean AS in_sources,
       (sqlc.narg(tags)::text[] IS NULL OR coalesce(d.tags && sqlc.narg(tags)::text[], false))::boolean AS tags_match,
       (d.tool_id IS NOT NULL)::boolean AS indexed,
       EXISTS (SELECT 1 FROM tool_vectors tv WHERE tv.set_id = sqlc.arg(vector_set)::bigint AND tv.tool_id = t.id) AS has_vector,
       coalesce((SELECT min(r.id) FROM toolgate_search_rules(sqlc.arg(query)::text, sqlc.narg(tenant)::text) AS r (id, action, tool, boost, position)
                 WHERE r.tool = t.name AND r.action = 'hide'), 0)::bigint AS hidden_by
FROM tools t
JOIN sources s ON s.id = t.source_id
LEFT JOIN search_docs d ON d.tool_id = t.id
WHERE t.name = ANY (sqlc.arg(names)::text[])
  AND (sqlc.narg(allowed)::text[] IS NULL OR s.name = ANY (sqlc.narg(allowed)::text[]));
