-- The BM25 statistics of each source, beside the corpus-wide ones: a search key restricted
-- to some sources scores with the statistics of those sources alone (N, the average
-- document length and every document frequency summed over them), so that its scores, its
-- explanations and the terms its query chooses candidates with say nothing about the
-- tools of sources it cannot see (docs/auth.md#search-statistics). The lexical indexer
-- keeps them with the corpus-wide ones (toolgate_search_refresh, sql/functions/lexical.sql).
--
-- search_source_lexemes: the document frequency of a lexeme among a source's indexed
-- tools, keyed by lexeme first (a search sums one lexeme over the allowed sources); rows
-- reaching 0 are deleted.
CREATE TABLE search_source_lexemes (
    lexeme    text NOT NULL,
    source_id bigint NOT NULL,
    df        integer NOT NULL CHECK (df >= 0),
    PRIMARY KEY (lexeme, source_id)
);

-- search_source_corpus: a source's number of indexed tools and their total length; a
-- source without any has no row.
CREATE TABLE search_source_corpus (
    source_id bigint PRIMARY KEY,
    docs      bigint NOT NULL,
    total_len double precision NOT NULL
);

-- Filled from the documents under the indexer's lock, so that no batch runs meanwhile. The
-- refresh function that no longer matches the tables is dropped in the same transaction: an
-- indexer that runs before sql/functions/lexical.sql makes it again (applied right after the
-- migrations) fails and leaves its batch queued, instead of writing the corpus-wide
-- statistics alone.
SELECT pg_advisory_xact_lock(7250011);
DROP FUNCTION IF EXISTS toolgate_search_refresh(bigint[]);

INSERT INTO search_source_lexemes (lexeme, source_id, df)
SELECT u.lexeme, d.source_id, count(*)
FROM search_docs d, unnest(d.lexemes) u (lexeme)
GROUP BY u.lexeme, d.source_id;

INSERT INTO search_source_corpus (source_id, docs, total_len)
SELECT d.source_id, count(*), sum(d.doc_len::float8)
FROM search_docs d
GROUP BY d.source_id;
