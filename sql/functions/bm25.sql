-- Okapi BM25, the lexical branch's score (docs/search.md#bm25): the one home of its
-- formulas. The search statement (sql/queries/search.sql), its explanation (explain.sql),
-- the tune's lexical lists (tune.sql), the query-word weights of the local embedder
-- (SearchWordIDF) and the index's posting impacts (lexical.sql) all call these functions.
--
-- k1 = 1.2 (term-frequency saturation) and b = 0.75 (length normalization) are constants,
-- not settings: the index stores impacts computed with them (search_postings.impact), so a
-- search with other values would choose its candidates by one formula and score them by
-- another.
--
-- Applied after the migrations, whole (CREATE OR REPLACE). LANGUAGE sql, IMMUTABLE and not
-- STRICT, so that the planner inlines each call into the calling statement: a function
-- here costs nothing at run time.

-- The idf of a lexeme held by df of the corpus's n documents: ln(1 + (n - df + 0.5) / (df + 0.5)).
CREATE OR REPLACE FUNCTION toolgate_bm25_idf(n double precision, df double precision) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT ln(1 + (n - df + 0.5) / (df + 0.5))
$$;

-- The term weight of a lexeme of (weighted) term frequency tf in a document of length
-- doc_len, avgdl the corpus's average: tf · (k1 + 1) / (tf + k1 · (1 - b + b · doc_len / avgdl)).
-- A document's BM25 for a query is Σ idf · term weight over the query's lexemes.
CREATE OR REPLACE FUNCTION toolgate_bm25_term(tf double precision, doc_len double precision, avgdl double precision)
RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT tf * (1.2 + 1) / (tf + 1.2 * (1 - 0.75 + 0.75 * doc_len / greatest(avgdl, 1e-9)))
$$;

-- A posting's impact: its term weight at the average length when it was written, stored to
-- choose a term's best candidates (search_postings_impact) and as the tune's lexical score.
CREATE OR REPLACE FUNCTION toolgate_bm25_impact(tf real, doc_len real, avgdl double precision) RETURNS real
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
    SELECT toolgate_bm25_term(tf, doc_len, avgdl)::real
$$;

-- The statistics a caller scores with: N, the average document length, and the sources they
-- cover (seen: their ids; NULL for the whole corpus). A caller restricted to some sources
-- (allowed, by name) scores with theirs alone, the sums of search_source_corpus over them,
-- so that nothing in its scores depends on a source it cannot see; any other caller (allowed
-- NULL) with the corpus's, search_corpus.
CREATE OR REPLACE FUNCTION toolgate_bm25_corpus(allowed text[])
RETURNS TABLE (n double precision, avgdl double precision, seen bigint[])
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT c.docs::float8, CASE WHEN c.docs > 0 THEN c.total_len / c.docs ELSE 1 END, c.seen
    FROM (
        SELECT sc.docs, sc.total_len, NULL::bigint[] AS seen
        FROM search_corpus sc
        WHERE allowed IS NULL
        UNION ALL
        SELECT coalesce(sum(ss.docs), 0)::bigint, coalesce(sum(ss.total_len), 0)::float8, a.ids
        FROM (SELECT ARRAY(SELECT x.id FROM sources x WHERE x.name = ANY (allowed)) AS ids) a
        LEFT JOIN search_source_corpus ss ON ss.source_id = ANY (a.ids)
        WHERE allowed IS NOT NULL
        GROUP BY a.ids
    ) c
$$;

-- The document frequency of a lexeme over the sources seen (toolgate_bm25_corpus's; NULL:
-- the whole corpus), NULL when none of them has it: one primary-key probe of search_lexemes,
-- or one primary-key range of search_source_lexemes (lexeme, source_id). PL/pgSQL, not SQL:
-- a SQL function with a query in it is not inlined, and its body was planned again in every
-- statement calling it (0.2-0.4 ms a search); PL/pgSQL keeps its plans for the session.
CREATE OR REPLACE FUNCTION toolgate_bm25_df(lex text, seen bigint[]) RETURNS bigint
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
BEGIN
    IF seen IS NULL THEN
        RETURN (SELECT l.df FROM search_lexemes l WHERE l.lexeme = lex);
    END IF;
    RETURN (SELECT sum(l.df) FROM search_source_lexemes l WHERE l.lexeme = lex AND l.source_id = ANY (seen));
END $$;
