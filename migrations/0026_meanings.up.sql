-- The meaning of each indexed tool's name, title and description (internal/meaning): a
-- sparse vector of the words that describe its words' senses, unit length, written by the
-- lexical indexer with the tool's index rows. The search's meaning branch re-scores the
-- candidates of the other branches with it (docs/search.md#meaning). Like search_docs it
-- has no foreign key: the indexer removes the meaning of a tool that is gone (its delete
-- queued it), and a tool deleted while the indexer read it never fails the indexer's write.
CREATE TABLE tool_meanings (
    tool_id bigint PRIMARY KEY,
    meaning sparsevec NOT NULL
);

-- The indexer's step now returns the ids it indexed (sql/functions/lexical.sql), so that the
-- indexer writes their meanings in the same transaction.
DROP FUNCTION IF EXISTS toolgate_search_index(integer);

-- Every tool is indexed again, which writes its meaning.
INSERT INTO search_queue (tool_id) SELECT id FROM tools ORDER BY id;
