-- Search analytics: where a search came from, and the rollups the analytics read
-- (docs/analytics.md). The rules and the views are in sql/functions/analytics.sql.
--
-- Every statement here is cheap on a big retrieval log: a nullable column without a default
-- and a NOT VALID check are catalog changes (no rewrite, no scan of search_log); the rollup
-- tables start empty and are filled by the search_rollup job in the background.

-- Where the search came from: 'rest' (POST /search), 'find_tools' (the MCP meta-tool) or
-- 'internal' (code that searches on nobody's behalf: evaluations, tests). NULL for the
-- searches logged before this migration; the analytics infer what they can of those
-- (toolgate_search_endpoint). NOT VALID: the rows already logged are NULL, which the check
-- accepts, so it holds for them without a scan under an exclusive lock.
ALTER TABLE search_log
    ADD COLUMN endpoint text,
    ADD CONSTRAINT search_log_endpoint CHECK (endpoint IN ('rest', 'find_tools', 'internal')) NOT VALID;

-- How far the rollups reach. Every search created before `through` (a whole hour) is in the
-- rollups below; the analytics read the rollups before it and the log from it on. Labels
-- created before `labels_through` are counted in the hourly rollup. `rules` is the digest of
-- the rule definitions the rollups were computed with (toolgate_search_rollup_rules): when
-- a rule changes, the rollups are ignored until they are rebuilt. A NULL `through`: nothing
-- is rolled up yet.
CREATE TABLE search_rollup_state (
    singleton      boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    through        timestamptz,
    labels_through timestamptz,
    rules          text,
    updated_at     timestamptz NOT NULL DEFAULT now()
);
INSERT INTO search_rollup_state DEFAULT VALUES;

-- Searches per hour (UTC), endpoint, serving profile and mode; labelled: searches with at
-- least one label; rr_sum: over the labelled ones, the sum of 1 / the best label's rank.
-- An hour is recomputed whole when labels of its searches arrive.
CREATE TABLE search_rollup_hourly (
    hour        timestamptz NOT NULL,
    endpoint    text NOT NULL,
    profile     text NOT NULL,
    mode        text NOT NULL,
    searches    bigint NOT NULL,
    zero_result bigint NOT NULL,
    low_score   bigint NOT NULL,
    labelled    bigint NOT NULL,
    rr_sum      double precision NOT NULL,
    PRIMARY KEY (hour, endpoint, profile, mode)
);

-- Per day (UTC) and query: searches, and those that found nothing. Rows are added to as
-- hours are rolled up (a day's row may hold part of the day). Keyed by hashes: a query may
-- be longer than a btree entry may be.
CREATE TABLE search_rollup_queries (
    day         date NOT NULL,
    query       text NOT NULL,
    searches    bigint NOT NULL,
    zero_result bigint NOT NULL,
    last_seen   timestamptz NOT NULL
);
CREATE UNIQUE INDEX search_rollup_queries_key ON search_rollup_queries (day, md5(query));

-- The searches that found nothing, per day, query, endpoint and filters.
CREATE TABLE search_rollup_zero (
    day       date NOT NULL,
    query     text NOT NULL,
    endpoint  text NOT NULL,
    filters   jsonb NOT NULL,
    searches  bigint NOT NULL,
    last_seen timestamptz NOT NULL
);
CREATE UNIQUE INDEX search_rollup_zero_key ON search_rollup_zero (day, endpoint, md5(query), md5(filters::text));

-- The low-score searches, per day, query, endpoint, mode and filters, with the least top
-- score and top BM25.
CREATE TABLE search_rollup_low (
    day       date NOT NULL,
    query     text NOT NULL,
    endpoint  text NOT NULL,
    mode      text NOT NULL,
    filters   jsonb NOT NULL,
    searches  bigint NOT NULL,
    top_score double precision,
    top_bm25  double precision NOT NULL,
    last_seen timestamptz NOT NULL
);
CREATE UNIQUE INDEX search_rollup_low_key ON search_rollup_low (day, endpoint, mode, md5(query), md5(filters::text));

-- Per month (UTC, as the log's partitions) and tool: how often searches returned it and
-- returned it first.
CREATE TABLE search_rollup_tools (
    month          date NOT NULL,
    tool_name      text NOT NULL,
    returned       bigint NOT NULL,
    returned_first bigint NOT NULL,
    PRIMARY KEY (month, tool_name)
);

-- Per tool, over the rollups: how often searches before `through` returned it and returned
-- it first (the sum of its search_rollup_tools rows).
CREATE TABLE search_rollup_tool_totals (
    tool_name      text PRIMARY KEY,
    returned       bigint NOT NULL,
    returned_first bigint NOT NULL
);

-- The slowest searches of each day (UTC), at most 500 (the most any analytics asks for):
-- the slowest of any window are among them.
CREATE TABLE search_rollup_slowest (
    day        date NOT NULL,
    search_id  bigint NOT NULL,
    created_at timestamptz NOT NULL,
    latency_ms double precision NOT NULL,
    PRIMARY KEY (search_id, created_at)
);
CREATE INDEX search_rollup_slowest_day ON search_rollup_slowest (day, latency_ms DESC);
