-- Search analytics (GET /admin/analytics/*, internal/analytics, docs/analytics.md): each
-- reads the function of sql/functions/analytics.sql that its psql view reads, over the
-- window of the last `days` UTC days, today included (toolgate_analytics_since); only the
-- order and the limit are the endpoint's.

-- name: AnalyticsSearches :many
SELECT s.start::timestamptz AS start, s.endpoint::text AS endpoint, s.searches::bigint AS searches,
       s.zero_result::bigint AS zero_result, s.labelled::bigint AS labelled, s.low_score::bigint AS low_score,
       s.low_confidence::bigint AS low_confidence
FROM toolgate_analytics_searches(toolgate_analytics_since(sqlc.arg(days)::int), sqlc.arg(bucket)::text)
    AS s (start, endpoint, searches, zero_result, labelled, low_score, low_confidence)
ORDER BY s.start, s.endpoint;

-- name: AnalyticsLatency :many
SELECT l.start::timestamptz AS start, l.searches::bigint AS searches, l.p50_ms::float8 AS p50_ms,
       l.p95_ms::float8 AS p95_ms, l.p99_ms::float8 AS p99_ms
FROM toolgate_analytics_latency(toolgate_analytics_since(sqlc.arg(days)::int), sqlc.arg(bucket)::text,
                                sqlc.narg(endpoint)::text)
    AS l (start, searches, p50_ms, p95_ms, p99_ms)
ORDER BY l.start;

-- name: AnalyticsZeroResults :many
SELECT z.query::text AS query, z.endpoint::text AS endpoint, z.filters::jsonb AS filters,
       z.searches::bigint AS searches, z.last_seen::timestamptz AS last_seen
FROM toolgate_analytics_zero_results(toolgate_analytics_since(sqlc.arg(days)::int))
    AS z (query, endpoint, filters, searches, last_seen)
ORDER BY z.searches DESC, z.last_seen DESC, z.query
LIMIT sqlc.arg(max_rows)::int;

-- name: AnalyticsLowScore :many
SELECT s.query::text AS query, s.endpoint::text AS endpoint, s.mode::text AS mode, s.filters::jsonb AS filters,
       s.searches::bigint AS searches, s.top_score::float8 AS top_score, s.top_bm25::float8 AS top_bm25,
       s.last_seen::timestamptz AS last_seen
FROM toolgate_analytics_low_score(toolgate_analytics_since(sqlc.arg(days)::int))
    AS s (query, endpoint, mode, filters, searches, top_score, top_bm25, last_seen)
ORDER BY s.searches DESC, s.last_seen DESC, s.query
LIMIT sqlc.arg(max_rows)::int;

-- name: AnalyticsProfiles :many
SELECT p.day::date AS day, p.profile::text AS profile, p.searches::bigint AS searches,
       p.labelled::bigint AS labelled, p.label_rate::float8 AS label_rate,
       coalesce(p.mrr, 0)::float8 AS mrr
FROM toolgate_analytics_profiles(toolgate_analytics_since(sqlc.arg(days)::int))
    AS p (day, profile, searches, labelled, label_rate, mrr)
ORDER BY p.day, p.profile;

-- name: AnalyticsLearning :many
-- Every tenant's (tenant NULL) or one tenant's: '' the operator's, a tenant's name, or
-- 'key:' || the name of a key of no tenant (the newest key of that name; its tenant is
-- 'key:' || its id). A name no key has is taken as it is: a tenant whose key row is gone
-- (rows the log holds but api_keys does not) is listed by AnalyticsTenants, and asked
-- for, as 'key:' || its id.
WITH w AS (
    SELECT coalesce((SELECT 'key:' || k.id FROM api_keys k
                     WHERE sqlc.narg(tenant)::text LIKE 'key:%' AND k.name = substr(sqlc.narg(tenant)::text, 5)
                     ORDER BY k.created_at DESC, k.id DESC LIMIT 1),
                    sqlc.narg(tenant)::text) AS want
)
SELECT l.day::date AS day, l.searches::bigint AS searches, l.memory_helped::bigint AS memory_helped,
       l.labelled::bigint AS labelled, l.hit_1::bigint AS hit_1, l.hit_5::bigint AS hit_5,
       l.memories::bigint AS memories
FROM w
CROSS JOIN LATERAL toolgate_analytics_learning(toolgate_analytics_since(sqlc.arg(days)::int), w.want)
    AS l (day, searches, memory_helped, labelled, hit_1, hit_5, memories)
ORDER BY l.day;

-- name: AnalyticsTenants :many
-- The tenants to choose from, as the answers name them: the operator's '', a tenant's name,
-- a key of no tenant 'key:' || its name.
SELECT x.tenant::text AS tenant
FROM (
    SELECT CASE WHEN t.tenant LIKE 'key:%' THEN 'key:' || coalesce(k.name, substr(t.tenant, 5)) ELSE t.tenant END AS tenant
    FROM toolgate_analytics_tenants(toolgate_analytics_since(sqlc.arg(days)::int)) AS t (tenant)
    LEFT JOIN api_keys k ON t.tenant LIKE 'key:%' AND k.id::text = substr(t.tenant, 5)
) x
GROUP BY x.tenant
ORDER BY x.tenant <> '', x.tenant;

-- name: AnalyticsTopQueries :many
SELECT q.query::text AS query, q.searches::bigint AS searches, q.zero_result::bigint AS zero_result,
       q.last_seen::timestamptz AS last_seen
FROM toolgate_analytics_top_queries(toolgate_analytics_since(sqlc.arg(days)::int))
    AS q (query, searches, zero_result, last_seen)
ORDER BY q.searches DESC, q.last_seen DESC, q.query
LIMIT sqlc.arg(max_rows)::int;

-- name: AnalyticsSlowest :many
SELECT s.id::bigint AS id, s.created_at::timestamptz AS created_at, s.latency_ms::float8 AS latency_ms,
       s.endpoint::text AS endpoint, s.mode::text AS mode, s.query::text AS query,
       s.result_count::int AS result_count
FROM toolgate_analytics_slowest(toolgate_analytics_since(sqlc.arg(days)::int), sqlc.arg(max_rows)::int)
    AS s (id, created_at, latency_ms, timings, endpoint, mode, k, result_count, query)
ORDER BY s.latency_ms DESC, s.id;

-- name: AnalyticsTools :many
-- The three lists of GET /admin/analytics/tools from one evaluation of the tools' numbers:
-- never_returned (searchable tools no search returned, by name), never_called (tools of the
-- catalog searches returned that no agent chose, the most returned first) and popular (the
-- most chosen, then the most returned), each at most max_rows long.
WITH t AS MATERIALIZED (
    SELECT x.tool_name, x.source, x.searchable, x.returned, x.returned_first, x.called, x.succeeded
    FROM toolgate_analytics_tools() AS x (tool_name, source, searchable, returned, returned_first, called, succeeded)
)
(SELECT 'never_returned'::text AS list, t.tool_name::text AS name, coalesce(t.source, '')::text AS source,
        t.returned::bigint AS returned, t.returned_first::bigint AS returned_first, t.called::bigint AS called,
        t.succeeded::bigint AS succeeded
 FROM t WHERE t.searchable AND t.returned = 0
 ORDER BY t.tool_name
 LIMIT sqlc.arg(max_rows)::int)
UNION ALL
(SELECT 'never_called', t.tool_name, coalesce(t.source, ''), t.returned, t.returned_first, t.called, t.succeeded
 FROM t WHERE t.source IS NOT NULL AND t.returned > 0 AND t.called = 0
 ORDER BY t.returned DESC, t.tool_name
 LIMIT sqlc.arg(max_rows)::int)
UNION ALL
(SELECT 'popular', t.tool_name, coalesce(t.source, ''), t.returned, t.returned_first, t.called, t.succeeded
 FROM t WHERE t.called > 0 OR t.returned > 0
 ORDER BY t.called DESC, t.returned DESC, t.tool_name
 LIMIT sqlc.arg(max_rows)::int);

-- name: SearchRollupStep :one
-- One step of the rollups (toolgate_search_rollup_step): its own transaction.
SELECT s.rolled_through::timestamptz AS rolled_through, s.hours_rolled::int AS hours_rolled,
       s.hours_relabelled::int AS hours_relabelled, s.caught_up::boolean AS caught_up
FROM toolgate_search_rollup_step(sqlc.arg(max_hours)::int, sqlc.arg(lag)::interval)
    AS s (rolled_through, hours_rolled, hours_relabelled, caught_up);

-- name: AnalyticsSetConfig :exec
-- Per-transaction settings of an analytics read: its aggregates hash tens of thousands of
-- rows (more memory than the default keeps them off disk), and JIT would compile for longer
-- than they run (their estimates cross jit_above_cost).
SELECT set_config('jit', 'off', true), set_config('work_mem', '64MB', true);
