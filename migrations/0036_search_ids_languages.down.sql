-- Back to the sequence's numbers as search ids (the ids given out since 0036 stay: they are
-- far above the sequence's, so no new id meets one), and to queries analysed in every
-- language of the index. The indexer's refresh is made again as sql/functions/lexical.sql
-- defined it before 0036, so that the index works on this schema. A later `migrate up`
-- applies the live definition again.
ALTER TABLE search_log ALTER COLUMN id SET DEFAULT nextval('search_log_id_seq');
DROP FUNCTION toolgate_search_id(bigint);
DROP TABLE search_id_key;

SELECT pg_advisory_xact_lock(7250011);
CREATE OR REPLACE FUNCTION toolgate_query_lexemes(txt text) RETURNS SETOF text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT DISTINCT u.lexeme
    FROM (SELECT 'english'::regconfig AS cfg
          UNION SELECT l.language::regconfig FROM search_languages l) c
    CROSS JOIN LATERAL unnest(toolgate_text_vector(c.cfg, txt)) AS u (lexeme, positions, weights)
    WHERE c.cfg = 'english'::regconfig
       OR NOT EXISTS (SELECT 1 FROM search_stopwords s WHERE s.word = u.lexeme AND s.language = 'english')
$$;
DROP FUNCTION IF EXISTS toolgate_query_lexemes(text, bigint[]);
DROP TABLE search_source_languages;

CREATE OR REPLACE FUNCTION toolgate_search_refresh(ids bigint[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    zeroed     text[];
    zeroed_lex text[];
    zeroed_src bigint[];
    avgdl      double precision;
BEGIN
    -- take back what the tools contributed
    WITH old AS (
        SELECT u.lexeme, d.source_id, count(*) AS n
        FROM search_docs d, unnest(d.lexemes) u (lexeme)
        WHERE d.tool_id = ANY (ids)
        GROUP BY u.lexeme, d.source_id
    ), dec AS (
        UPDATE search_lexemes l SET df = l.df - o.n
        FROM (SELECT old.lexeme, sum(old.n) AS n FROM old GROUP BY old.lexeme) o
        WHERE l.lexeme = o.lexeme
        RETURNING l.lexeme, l.df
    ), sdec AS (
        UPDATE search_source_lexemes l SET df = l.df - old.n
        FROM old WHERE l.lexeme = old.lexeme AND l.source_id = old.source_id
        RETURNING l.lexeme, l.source_id, l.df
    )
    SELECT (SELECT array_agg(dec.lexeme) FROM dec WHERE dec.df <= 0),
           s.lex, s.src
    INTO zeroed, zeroed_lex, zeroed_src
    FROM (SELECT array_agg(sdec.lexeme ORDER BY sdec.lexeme, sdec.source_id) AS lex,
                 array_agg(sdec.source_id ORDER BY sdec.lexeme, sdec.source_id) AS src
          FROM sdec WHERE sdec.df <= 0) s;
    WITH old AS (
        SELECT d.language, count(*) AS n FROM search_docs d WHERE d.tool_id = ANY (ids) GROUP BY d.language
    )
    UPDATE search_languages l SET docs = l.docs - old.n FROM old WHERE l.language = old.language;
    WITH gone AS (
        DELETE FROM search_docs WHERE tool_id = ANY (ids) RETURNING source_id, doc_len
    ), sgone AS (
        UPDATE search_source_corpus c SET docs = c.docs - g.n, total_len = c.total_len - g.len
        FROM (SELECT gone.source_id, count(*) AS n, sum(gone.doc_len::float8) AS len FROM gone GROUP BY gone.source_id) g
        WHERE c.source_id = g.source_id
    )
    UPDATE search_corpus
       SET docs = docs - (SELECT count(*) FROM gone),
           total_len = total_len - (SELECT coalesce(sum(doc_len), 0) FROM gone);
    DELETE FROM search_postings WHERE tool_id = ANY (ids);

    -- and add what they contribute now
    INSERT INTO search_docs (tool_id, source_id, lexemes, tfs, doc_len, tags, name_keys, language)
    SELECT * FROM toolgate_search_document(ids);
    INSERT INTO search_languages (language, docs)
    SELECT d.language, count(*) FROM search_docs d WHERE d.tool_id = ANY (ids) GROUP BY d.language
    ON CONFLICT (language) DO UPDATE SET docs = search_languages.docs + EXCLUDED.docs;
    DELETE FROM search_languages WHERE docs <= 0;
    UPDATE search_corpus
       SET docs = docs + s.n, total_len = total_len + s.len, name_words = greatest(name_words, s.words)
      FROM (SELECT count(*) AS n, coalesce(sum(doc_len), 0) AS len,
                   coalesce(max((SELECT max(cardinality(string_to_array(k, ' '))) FROM unnest(name_keys) k)), 0) AS words
            FROM search_docs WHERE tool_id = ANY (ids)) s;
    UPDATE search_corpus
       SET impact_avgdl = CASE WHEN docs > 0 THEN total_len / docs ELSE 0 END
     WHERE impact_avgdl = 0;
    SELECT CASE WHEN docs > 0 THEN total_len / docs ELSE 1 END INTO avgdl FROM search_corpus;
    INSERT INTO search_source_corpus (source_id, docs, total_len)
    SELECT d.source_id, count(*), sum(d.doc_len::float8) FROM search_docs d WHERE d.tool_id = ANY (ids) GROUP BY d.source_id
    ON CONFLICT (source_id) DO UPDATE
        SET docs = search_source_corpus.docs + EXCLUDED.docs, total_len = search_source_corpus.total_len + EXCLUDED.total_len;
    -- the sources no indexed tool has any more
    DELETE FROM search_source_corpus WHERE docs <= 0;

    PERFORM toolgate_search_write_postings(ids, avgdl);

    WITH new AS (
        SELECT u.lexeme, d.source_id, count(*) AS n
        FROM search_docs d, unnest(d.lexemes) u (lexeme)
        WHERE d.tool_id = ANY (ids)
        GROUP BY u.lexeme, d.source_id
    ), sinc AS (
        INSERT INTO search_source_lexemes (lexeme, source_id, df)
        SELECT new.lexeme, new.source_id, new.n FROM new
        ON CONFLICT (lexeme, source_id) DO UPDATE SET df = search_source_lexemes.df + EXCLUDED.df
    )
    INSERT INTO search_lexemes (lexeme, df)
    SELECT new.lexeme, sum(new.n) FROM new GROUP BY new.lexeme
    ON CONFLICT (lexeme) DO UPDATE SET df = search_lexemes.df + EXCLUDED.df;
    -- the lexemes no document has any more, corpus-wide and in a source
    IF zeroed IS NOT NULL THEN
        DELETE FROM search_lexemes WHERE lexeme = ANY (zeroed) AND df <= 0;
    END IF;
    IF zeroed_lex IS NOT NULL THEN
        DELETE FROM search_source_lexemes l
        USING unnest(zeroed_lex, zeroed_src) AS z (lexeme, source_id)
        WHERE l.lexeme = z.lexeme AND l.source_id = z.source_id AND l.df <= 0;
    END IF;
END $$;
