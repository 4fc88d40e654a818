-- Two additions: the answers' confidence in the retrieval log, and the removal of one memory
-- of a tool.
--
-- The confidence of each search's answer (search.Response.Confidence and NoGoodMatch,
-- docs/search.md#confidence), logged so the analytics count the searches that returned
-- tools but no good match and the low-score rule flags them (sql/functions/analytics.sql).
--
-- Catalog changes only on a big retrieval log: nullable columns without a default (NULL for
-- the searches logged before this migration, which the analytics judge by ranks alone), and
-- a constant default on the rollup table.
ALTER TABLE search_log
    ADD COLUMN confidence double precision,
    ADD COLUMN no_good_match boolean;

-- Per hour, endpoint, profile and mode: the searches that returned tools but no good match,
-- and those with a result the memory branch scored (what the catalog learned helped).
ALTER TABLE search_rollup_hourly
    ADD COLUMN low_confidence bigint NOT NULL DEFAULT 0,
    ADD COLUMN memory_helped bigint NOT NULL DEFAULT 0;

-- One memory of a tool removed by the operator (DELETE /admin/tools/{name}/memories/{id}):
-- the searches of its tenant with its query (norm, as tool_memories) made before
-- forgotten_at teach the tool nothing again; its other memories stay.
CREATE TABLE tool_memory_query_forgets (
    tool_id      bigint NOT NULL REFERENCES tools (id) ON DELETE CASCADE,
    tenant       text NOT NULL,
    norm         text NOT NULL,
    forgotten_at timestamptz NOT NULL,
    PRIMARY KEY (tool_id, tenant, norm)
);
