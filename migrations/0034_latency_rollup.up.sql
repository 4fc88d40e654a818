-- Search latency per hour and endpoint as a histogram (sql/functions/analytics.sql,
-- toolgate_latency_bucket): the percentiles of any window are read from it, as they do not
-- add up from per-hour percentiles. Filled by the search_rollup job like the other rollups.
CREATE TABLE search_rollup_latency (
    hour     timestamptz NOT NULL,
    endpoint text NOT NULL,
    bucket   smallint NOT NULL,
    searches bigint NOT NULL,
    PRIMARY KEY (hour, endpoint, bucket)
);

-- The other rollups were computed without it: rebuild them all with it.
UPDATE search_rollup_state SET through = NULL, updated_at = now();
