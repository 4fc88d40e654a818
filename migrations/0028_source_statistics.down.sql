-- Back to the corpus-wide statistics alone: the per-source tables go, and the indexer's
-- refresh is made again as sql/functions/lexical.sql defined it before 0028, so that the
-- index works on this schema. A later `migrate up` applies the live definition again.
SELECT pg_advisory_xact_lock(7250011);
DROP TABLE search_source_lexemes, search_source_corpus;

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
    WITH old AS (
        SELECT d.language, count(*) AS n FROM search_docs d WHERE d.tool_id = ANY (ids) GROUP BY d.language
    )
    UPDATE search_languages l SET docs = l.docs - old.n FROM old WHERE l.language = old.language;
    WITH gone AS (
        DELETE FROM search_docs WHERE tool_id = ANY (ids) RETURNING doc_len
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
