-- Back to English documents (migration 0021's index): the objects of 0025 go, and the
-- functions that read them are made again as sql/functions/lexical.sql defined them before
-- it, so that the index works on this schema; every tool is indexed again. A later
-- `migrate up` applies the live definitions again.
DROP FUNCTION IF EXISTS toolgate_search_document(bigint[]);
DROP FUNCTION IF EXISTS toolgate_field_vector(regconfig, text, text);
DROP FUNCTION IF EXISTS toolgate_detect_language(text);
ALTER TABLE search_docs DROP COLUMN language;
DROP TABLE search_languages;
DROP TABLE search_stopwords;

CREATE OR REPLACE FUNCTION toolgate_text_vector(txt text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT to_tsvector('english', txt) || to_tsvector('simple', toolgate_cjk_bigrams(txt))
$$;

-- a query's lexemes: the english ones only
CREATE OR REPLACE FUNCTION toolgate_query_lexemes(txt text) RETURNS SETOF text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT DISTINCT u.lexeme FROM unnest(toolgate_text_vector(txt)) AS u (lexeme, positions, weights)
$$;

CREATE FUNCTION toolgate_search_document(ids bigint[])
RETURNS TABLE (tool_id bigint, source_id bigint, lexemes text[], tfs real[], doc_len real, tags text[], name_keys text[])
LANGUAGE sql STABLE AS $$
    SELECT d.tool_id, d.source_id,
           coalesce(x.lexemes, '{}'), coalesce(x.tfs, '{}'), coalesce(x.len, 0),
           d.tags, d.name_keys
    FROM (
        SELECT t.id AS tool_id, t.source_id,
               setweight(toolgate_text_vector(toolgate_name_key(t.name) || ' ' || coalesce(t.title, '')), 'A')
            || setweight(toolgate_text_vector(coalesce(
                   (SELECT string_agg(c.text, ' ' ORDER BY c.kind, c.ordinal) FROM tool_components c
                    WHERE c.tool_id = t.id
                      AND c.kind IN ('question', 'observed', 'topics', 'profile_tags', 'profile_function')), '')), 'B')
            || setweight(toolgate_text_vector(t.description || ' ' || coalesce(
                   (SELECT string_agg(c.text, ' ' ORDER BY c.ordinal) FROM tool_components c
                    WHERE c.tool_id = t.id AND c.kind = 'profile_when_to_use'), '')), 'C')
            || setweight(toolgate_text_vector(coalesce(
                   (SELECT string_agg(toolgate_name_key(p.key) || ' ' || coalesce(p.value ->> 'description', ''), ' ')
                    FROM jsonb_each(CASE WHEN jsonb_typeof(t.input_schema -> 'properties') = 'object'
                                         THEN t.input_schema -> 'properties' ELSE '{}'::jsonb END) p), '')), 'D')
               AS doc,
               coalesce((SELECT array_agg(DISTINCT tag) FROM (
                   SELECT lower(btrim(x, E' \t\r\n"[]')) AS tag
                   FROM tool_components c, regexp_split_to_table(c.text, '[,;\n]') x
                   WHERE c.tool_id = t.id AND c.kind = 'profile_tags') s
                   WHERE tag <> ''), '{}') AS tags,
               ARRAY[toolgate_name_key(t.name), toolgate_name_key(t.original_name)] AS name_keys
        FROM tools t
        WHERE t.id = ANY (ids) AND t.enabled AND t.review_state = 'approved'
    ) d
    CROSS JOIN LATERAL (
        SELECT array_agg(u.lexeme ORDER BY u.lexeme) AS lexemes, array_agg(u.tf ORDER BY u.lexeme) AS tfs,
               sum(u.tf)::real AS len
        FROM (SELECT v.lexeme, (SELECT sum(toolgate_field_weight(w)) FROM unnest(v.weights) w)::real AS tf
              FROM unnest(d.doc) v) u
    ) x
$$;

CREATE OR REPLACE FUNCTION toolgate_search_refresh(ids bigint[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    zeroed text[];
    avgdl  double precision;
BEGIN
    -- take back what the tools contributed
    WITH old AS (
        SELECT u.lexeme, count(*) AS n
        FROM search_docs d, unnest(d.lexemes) u (lexeme)
        WHERE d.tool_id = ANY (ids)
        GROUP BY u.lexeme
    ), dec AS (
        UPDATE search_lexemes l SET df = l.df - old.n FROM old WHERE l.lexeme = old.lexeme
        RETURNING l.lexeme, l.df
    )
    SELECT array_agg(lexeme) INTO zeroed FROM dec WHERE df <= 0;
    WITH gone AS (
        DELETE FROM search_docs WHERE tool_id = ANY (ids) RETURNING doc_len
    )
    UPDATE search_corpus
       SET docs = docs - (SELECT count(*) FROM gone),
           total_len = total_len - (SELECT coalesce(sum(doc_len), 0) FROM gone);
    DELETE FROM search_postings WHERE tool_id = ANY (ids);

    -- and add what they contribute now
    INSERT INTO search_docs (tool_id, source_id, lexemes, tfs, doc_len, tags, name_keys)
    SELECT * FROM toolgate_search_document(ids);
    UPDATE search_corpus
       SET docs = docs + s.n, total_len = total_len + s.len, name_words = greatest(name_words, s.words)
      FROM (SELECT count(*) AS n, coalesce(sum(doc_len), 0) AS len,
                   coalesce(max((SELECT max(cardinality(string_to_array(k, ' '))) FROM unnest(name_keys) k)), 0) AS words
            FROM search_docs WHERE tool_id = ANY (ids)) s;
    UPDATE search_corpus
       SET impact_avgdl = CASE WHEN docs > 0 THEN total_len / docs ELSE 0 END
     WHERE impact_avgdl = 0;
    SELECT CASE WHEN docs > 0 THEN total_len / docs ELSE 1 END INTO avgdl FROM search_corpus;

    PERFORM toolgate_search_write_postings(ids, avgdl);

    INSERT INTO search_lexemes (lexeme, df)
    SELECT u.lexeme, count(*)
    FROM search_docs d, unnest(d.lexemes) u (lexeme)
    WHERE d.tool_id = ANY (ids)
    GROUP BY u.lexeme
    ON CONFLICT (lexeme) DO UPDATE SET df = search_lexemes.df + EXCLUDED.df;
    -- the lexemes no document has any more
    IF zeroed IS NOT NULL THEN
        DELETE FROM search_lexemes WHERE lexeme = ANY (zeroed) AND df <= 0;
    END IF;
END $$;

INSERT INTO search_queue (tool_id) SELECT id FROM tools;
