-- Back to the analytics of migration 0019: the views as migrations 0004 and 0014 made them
-- (dropped first: CREATE OR REPLACE VIEW cannot remove columns), without the functions of
-- sql/functions/analytics.sql, the rollups and the endpoint column.
DROP VIEW IF EXISTS search_traffic, search_top_queries, search_profile_daily, search_profile_quality,
    search_used_rank, search_daily, search_zero_result_queries, search_low_score_queries, search_tool_popularity,
    search_slowest, search_label_stats;

-- Searches per day with latency percentiles (latency_ms: embedding + database time).
CREATE VIEW search_daily AS
SELECT date_trunc('day', created_at)::date AS day,
       count(*) AS searches,
       count(*) FILTER (WHERE result_count = 0) AS zero_result,
       round(avg(result_count)::numeric, 1) AS avg_results,
       round((percentile_cont(0.50) WITHIN GROUP (ORDER BY latency_ms))::numeric, 2) AS p50_ms,
       round((percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms))::numeric, 2) AS p95_ms,
       round((percentile_cont(0.99) WITHIN GROUP (ORDER BY latency_ms))::numeric, 2) AS p99_ms,
       round(max(latency_ms)::numeric, 2) AS max_ms
FROM search_log
GROUP BY 1;

-- Queries that found nothing, most frequent first.
CREATE VIEW search_zero_result_queries AS
SELECT query, count(*) AS searches, max(created_at) AS last_seen
FROM search_log
WHERE result_count = 0
GROUP BY query;

-- Searches whose best result is weak: in hybrid mode the top tool was found by one branch
-- only (the branches disagree: its fused score is at most 1/(k_rrf+1) with the default
-- k_rrf 60 and weights 1), or the top tool's BM25 score is below 1 (a weak keyword match).
CREATE VIEW search_low_score_queries AS
SELECT query, mode, count(*) AS searches,
       round(min(top_score)::numeric, 5) AS min_top_score,
       round(min((results -> 0 ->> 'bm25')::numeric), 3) AS min_top_bm25,
       max(created_at) AS last_seen
FROM search_log
WHERE result_count > 0
  AND ((mode = 'hybrid' AND top_score <= 1.0 / 61 + 1e-9)
       OR (mode <> 'vector' AND coalesce((results -> 0 ->> 'bm25')::float8, 0) < 1.0))
GROUP BY query, mode;

-- Per tool: how often it was returned, returned first, and called after a search.
CREATE VIEW search_tool_popularity AS
WITH returned AS (
    SELECT r.value ->> 'name' AS tool_name, count(*) AS returned,
           count(*) FILTER (WHERE r.pos = 1) AS returned_first
    FROM search_log l, jsonb_array_elements(l.results) WITH ORDINALITY AS r (value, pos)
    GROUP BY 1
), called AS (
    SELECT tool_name, count(*) AS called, count(*) FILTER (WHERE success) AS succeeded
    FROM search_feedback GROUP BY 1
)
SELECT coalesce(r.tool_name, c.tool_name) AS tool_name,
       coalesce(r.returned, 0) AS returned, coalesce(r.returned_first, 0) AS returned_first,
       coalesce(c.called, 0) AS called, coalesce(c.succeeded, 0) AS succeeded
FROM returned r FULL JOIN called c ON c.tool_name = r.tool_name;

-- The rank of each tool an agent called after a search (NULL when the search did not return it).
CREATE VIEW search_used_rank AS
SELECT f.search_id, l.created_at, coalesce(l.profile, '(active)') AS profile, l.mode, l.k,
       f.tool_name, f.success,
       (SELECT r.pos FROM jsonb_array_elements(l.results) WITH ORDINALITY AS r (value, pos)
        WHERE r.value ->> 'name' = f.tool_name) AS rank
FROM search_feedback f
JOIN search_log l ON l.id = f.search_id;

-- MRR and hit@k of the tools finally used, per weight profile and mode: compares profiles
-- on real traffic.
CREATE VIEW search_profile_quality AS
SELECT profile, mode, count(*) AS used,
       round(avg(coalesce(1.0 / rank, 0)), 4) AS mrr,
       round(avg(CASE WHEN rank = 1 THEN 1.0 ELSE 0 END), 4) AS hit_at_1,
       round(avg(CASE WHEN rank <= 3 THEN 1.0 ELSE 0 END), 4) AS hit_at_3,
       round(avg(CASE WHEN rank <= 5 THEN 1.0 ELSE 0 END), 4) AS hit_at_5,
       round(avg(CASE WHEN rank IS NOT NULL THEN 1.0 ELSE 0 END), 4) AS hit_at_k
FROM search_used_rank
GROUP BY profile, mode;

-- The slowest searches.
CREATE VIEW search_slowest AS
SELECT id, created_at, round(latency_ms::numeric, 2) AS latency_ms, timings, mode, k,
       result_count, left(query, 80) AS query
FROM search_log
ORDER BY latency_ms DESC NULLS LAST
LIMIT 100;

-- Label rate and the rank of the chosen tool, per day of the search, weight profile and
-- label source ('call', 'feedback', and 'any': a search labelled by either counts once).
-- searches: searches of that day and profile; labelled: those with at least one label of
-- that source; label_rate = labelled / searches. mean_rank, median_rank and mrr are over
-- the labels (a search may have several), median_delay_ms from search to call.
CREATE VIEW search_label_stats AS
WITH searches AS (
    SELECT date_trunc('day', created_at)::date AS day, coalesce(profile, '(active)') AS profile,
           count(*) AS searches
    FROM search_log
    GROUP BY 1, 2
), labels AS (
    SELECT date_trunc('day', l.created_at)::date AS day, coalesce(l.profile, '(active)') AS profile,
           coalesce(x.label_source, 'any') AS label_source,
           count(DISTINCT x.search_id) AS labelled, count(*) AS labels,
           avg(x.rank) AS mean_rank,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY x.rank) AS median_rank,
           avg(1.0 / x.rank) AS mrr,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY x.delay_ms) AS median_delay_ms
    FROM search_labels x
    JOIN search_log l ON l.id = x.search_id AND l.created_at = x.search_created_at
    GROUP BY GROUPING SETS ((date_trunc('day', l.created_at)::date, coalesce(l.profile, '(active)'), x.label_source),
                            (date_trunc('day', l.created_at)::date, coalesce(l.profile, '(active)')))
)
SELECT s.day, s.profile, b.label_source, s.searches, b.labelled,
       round(b.labelled::numeric / s.searches, 4) AS label_rate,
       b.labels,
       round(b.mean_rank, 2) AS mean_rank,
       round(b.median_rank::numeric, 1) AS median_rank,
       round(b.mrr, 4) AS mrr,
       round(b.median_delay_ms::numeric) AS median_delay_ms
FROM searches s
JOIN labels b ON b.day = s.day AND b.profile = s.profile;

-- Dropping a month of the retrieval log drops its labels too.
CREATE OR REPLACE FUNCTION toolgate_drop_search_log_partitions(keep interval) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    r       record;
    dropped integer := 0;
BEGIN
    FOR r IN
        SELECT c.relname
        FROM pg_inherits i
        JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'search_log'::regclass
          AND c.relname ~ '^search_log_[0-9]{6}$'
          AND (to_date(substr(c.relname, 12), 'YYYYMM') + interval '1 month') <= now() - keep
    LOOP
        EXECUTE format('DROP TABLE %I', r.relname);
        EXECUTE format('DELETE FROM search_labels WHERE search_created_at >= %L AND search_created_at < %L',
                       to_date(substr(r.relname, 12), 'YYYYMM'),
                       to_date(substr(r.relname, 12), 'YYYYMM') + interval '1 month');
        dropped := dropped + 1;
    END LOOP;
    RETURN dropped;
END $$;

DROP FUNCTION IF EXISTS toolgate_search_rollup_step(integer, interval);
DROP FUNCTION IF EXISTS toolgate_analytics_slowest(timestamptz, integer);
DROP FUNCTION IF EXISTS toolgate_analytics_tools();
DROP FUNCTION IF EXISTS toolgate_analytics_top_queries(timestamptz);
DROP FUNCTION IF EXISTS toolgate_analytics_low_score(timestamptz);
DROP FUNCTION IF EXISTS toolgate_analytics_zero_results(timestamptz);
DROP FUNCTION IF EXISTS toolgate_analytics_profiles(timestamptz);
DROP FUNCTION IF EXISTS toolgate_analytics_searches(timestamptz, text);
DROP FUNCTION IF EXISTS toolgate_search_hourly(timestamptz);
DROP FUNCTION IF EXISTS toolgate_search_rollup_through();
DROP FUNCTION IF EXISTS toolgate_search_rollup_rules();
DROP FUNCTION IF EXISTS toolgate_search_slowest_of(timestamptz, timestamptz, integer);
DROP FUNCTION IF EXISTS toolgate_search_tool_labels();
DROP FUNCTION IF EXISTS toolgate_search_tools_of(timestamptz, timestamptz);
DROP FUNCTION IF EXISTS toolgate_search_queries_of(timestamptz, timestamptz);
DROP FUNCTION IF EXISTS toolgate_search_zero_of(timestamptz, timestamptz);
DROP FUNCTION IF EXISTS toolgate_search_low_of(timestamptz, timestamptz);
DROP FUNCTION IF EXISTS toolgate_search_hourly_of(timestamptz, timestamptz);
DROP FUNCTION IF EXISTS toolgate_analytics_since(integer);
DROP FUNCTION IF EXISTS toolgate_search_low_score(text, integer, jsonb);
DROP FUNCTION IF EXISTS toolgate_search_profile(text);
DROP FUNCTION IF EXISTS toolgate_search_endpoint(text, text, text, bigint);

DROP TABLE IF EXISTS search_rollup_slowest, search_rollup_tool_totals, search_rollup_tools, search_rollup_low,
    search_rollup_zero, search_rollup_queries, search_rollup_hourly,
    search_rollup_state;
ALTER TABLE search_log
    DROP CONSTRAINT IF EXISTS search_log_endpoint,
    DROP COLUMN IF EXISTS endpoint;
