-- Lexical engine v2 (docs/search.md#the-lexical-index): the index is no longer refreshed by
-- triggers inside every writing transaction under one global lock. A write to tools or
-- tool_components only appends the tool's id to search_queue; a single indexer
-- (toolgate_search_index, sql/functions/lexical.sql) drains the queue in batches. Writers
-- therefore never wait on each other for the index, and the index is built set-based.
--
-- The functions and triggers of the index live in sql/functions/lexical.sql and are applied
-- (CREATE OR REPLACE) after the migrations by internal/postgres.MigrateUp, so that their
-- code has one home and changes without a new copy in a migration.

DROP TRIGGER tools_lexical_insert ON tools;
DROP TRIGGER tools_lexical_update ON tools;
DROP TRIGGER tools_lexical_delete ON tools;
DROP TRIGGER tool_components_lexical_insert ON tool_components;
DROP TRIGGER tool_components_lexical_update ON tool_components;
DROP TRIGGER tool_components_lexical_delete ON tool_components;
DROP FUNCTION toolgate_tools_lexical();
DROP FUNCTION toolgate_components_lexical();
DROP FUNCTION toolgate_search_reindex();
DROP FUNCTION toolgate_search_refresh(bigint[]);

-- The document of a tool as parallel arrays (sorted lexemes and their weighted term
-- frequencies) instead of a tsvector: the search scores its candidates exactly from them
-- with one row read per candidate, whatever the query's length.
TRUNCATE search_docs;
ALTER TABLE search_docs DROP COLUMN doc,
    ADD COLUMN lexemes text[] NOT NULL,
    ADD COLUMN tfs real[] NOT NULL;

-- Postings only choose candidates (a term's best postings by impact); scores come from
-- search_docs. The primary key serves the indexer's deletes by tool.
DROP TABLE search_postings;
CREATE TABLE search_postings (
    lexeme    text NOT NULL,
    tool_id   bigint NOT NULL,
    source_id bigint NOT NULL,
    impact    real NOT NULL,
    PRIMARY KEY (tool_id, lexeme)
);
CREATE INDEX search_postings_impact ON search_postings (lexeme, impact DESC) INCLUDE (tool_id, source_id);

TRUNCATE search_lexemes;
-- impact_avgdl: the average document length the stored impacts were computed with; the
-- indexer recomputes every impact when the average drifts too far from it.
ALTER TABLE search_corpus ADD COLUMN impact_avgdl double precision NOT NULL DEFAULT 0;
-- name_words: the most words of any indexed name key (never lowered), which bounds the runs
-- of query words a search compares with the name keys.
ALTER TABLE search_corpus ADD COLUMN name_words integer NOT NULL DEFAULT 0;
UPDATE search_corpus SET docs = 0, total_len = 0;

-- Tools whose index rows must be recomputed. Append-only for writers (no unique key, so two
-- writers never wait on each other here); only the indexer deletes.
CREATE TABLE search_queue (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tool_id   bigint NOT NULL,
    queued_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX search_queue_tool ON search_queue (tool_id);

-- Everything is rebuilt by the indexer.
INSERT INTO search_queue (tool_id) SELECT id FROM tools ORDER BY id;

-- The functions and triggers applied from sql/functions, by file, with their content hash:
-- a file is applied again only when it changed.
CREATE TABLE schema_functions (
    file       text PRIMARY KEY,
    sha256     text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);
