-- The latency answers go with their table; the binary of schema 0033 applies its own
-- sql/functions (a rollup step without the latency histogram) when it starts.
DROP VIEW IF EXISTS search_latency_hourly;
DROP FUNCTION IF EXISTS toolgate_analytics_latency(timestamptz, text, text);
DROP FUNCTION IF EXISTS toolgate_search_latency(timestamptz);
DROP FUNCTION IF EXISTS toolgate_search_latency_of(timestamptz, timestamptz);
DROP TABLE search_rollup_latency;
