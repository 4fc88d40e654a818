-- Two things a caller could learn and no longer does: the platform's search volume, from its
-- search ids, and the languages of sources it cannot see, from its query's terms.
--
-- A search's id (search_id, which every caller sees) says nothing about how many searches
-- the platform answered: it is a keyed permutation of the sequence, not the sequence. Two
-- searches of one key return ids whose difference tells neither the searches in between
-- nor their order (docs/auth.md#search-ids).
--
-- search_id_key: the secret of the permutation, 244 random bits drawn once, by the
-- database's strong random source (gen_random_uuid). It never changes: the ids already
-- given out must stay distinct from the ones still to come.
CREATE TABLE search_id_key (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    key      text NOT NULL
);
INSERT INTO search_id_key (key) VALUES (gen_random_uuid()::text || gen_random_uuid()::text);

-- toolgate_search_id: the id of the search numbered seq by search_log_id_seq. A Feistel
-- network of 8 rounds over two halves of 26 bits, each round keyed by MD5 of the secret,
-- is a permutation of [0, 2^52): distinct numbers give distinct ids, no unique index needed
-- (search_log is partitioned by time, so none on id alone could exist). The result is moved
-- to [2^52, 2^53): apart from the ids of the sequence given out before (all far below), and
-- still an integer a JSON number holds exactly (JavaScript's Number included).
CREATE FUNCTION toolgate_search_id(seq bigint) RETURNS bigint
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
DECLARE
    secret text := (SELECT key FROM search_id_key);
    half   constant bigint := 67108863; -- 2^26 - 1
    l      bigint := (seq >> 26) & half;
    r      bigint := seq & half;
    t      bigint;
BEGIN
    FOR i IN 1..8 LOOP
        t := r;
        r := l # (('x' || left(md5(secret || ':' || i || ':' || r), 8))::bit(32)::bigint & half);
        l := t;
    END LOOP;
    RETURN (1::bigint << 52) | (l << 26) | r;
END $$;

ALTER TABLE search_log ALTER COLUMN id SET DEFAULT toolgate_search_id(nextval('search_log_id_seq'));

-- search_source_languages: how many of a source's indexed tools each language has. A query
-- of a caller restricted to some sources is analysed in the languages of those sources
-- alone (toolgate_query_lexemes), so that the terms its explanation lists do not tell that
-- another source holds tools in, say, German (docs/auth.md#search-statistics). Kept by the
-- lexical indexer with search_languages (toolgate_search_refresh, sql/functions/lexical.sql),
-- filled here from the documents under the indexer's lock; the refresh that does not keep
-- it is dropped in the same transaction, as in 0028.
CREATE TABLE search_source_languages (
    source_id bigint NOT NULL,
    language  text NOT NULL,
    docs      bigint NOT NULL,
    PRIMARY KEY (source_id, language)
);

SELECT pg_advisory_xact_lock(7250011);
DROP FUNCTION IF EXISTS toolgate_search_refresh(bigint[]);

INSERT INTO search_source_languages (source_id, language, docs)
SELECT d.source_id, d.language, count(*)
FROM search_docs d
GROUP BY d.source_id, d.language;
