-- The retrieval log one search at a time (GET /admin/searches, GET /admin/searches/{id},
-- internal/analytics/searchlog.go, docs/analytics.md): the recent searches of a query, and
-- one search with its results, its labels and what its session searched next. Endpoint and
-- profile are named as the analytics name them (toolgate_search_endpoint, _profile).

-- name: RecentSearches :many
SELECT l.id, l.created_at, l.query,
       toolgate_search_endpoint(l.endpoint, l.session_id, l.caller, l.caller_key_id)::text AS endpoint,
       l.mode, toolgate_search_profile(l.profile)::text AS profile, l.result_count, l.top_score, l.latency_ms,
       l.session_id, l.caller,
       coalesce(b.labels, 0)::bigint AS labels, coalesce(b.best_rank, 0)::int AS best_rank
FROM search_log l
LEFT JOIN LATERAL (
    SELECT count(*) AS labels, min(x.rank) AS best_rank
    FROM search_labels x
    WHERE x.search_id = l.id AND x.search_created_at = l.created_at
) b ON true
WHERE l.created_at >= toolgate_analytics_since(sqlc.arg(days)::int)
  AND (sqlc.narg(query)::text IS NULL OR l.query = sqlc.narg(query)::text)
ORDER BY l.created_at DESC, l.id DESC
LIMIT sqlc.arg(max_rows)::int;

-- name: GetSearchLogEntry :one
SELECT l.id, l.created_at, l.query, l.variants,
       toolgate_search_endpoint(l.endpoint, l.session_id, l.caller, l.caller_key_id)::text AS endpoint,
       l.mode, l.k, l.filters, toolgate_search_profile(l.profile)::text AS profile, l.format, l.plan, l.rerank,
       l.results, l.result_count, l.top_score, l.latency_ms, l.timings, l.caller, l.session_id,
       coalesce(e.name, '')::text AS experiment, l.arm
FROM search_log l
LEFT JOIN profile_experiments e ON e.id = l.experiment_id
WHERE l.id = sqlc.arg(id);

-- name: SearchLabelsOf :many
SELECT x.tool_name, x.label_source, x.rank, x.delay_ms, x.tool_source, x.success, x.created_at
FROM search_labels x
WHERE x.search_id = sqlc.arg(search_id) AND x.search_created_at = sqlc.arg(search_created_at)
ORDER BY x.created_at, x.tool_name, x.label_source;

-- name: LaterSearchesOfSession :many
SELECT l.id, l.created_at, l.query,
       toolgate_search_endpoint(l.endpoint, l.session_id, l.caller, l.caller_key_id)::text AS endpoint,
       l.result_count,
       coalesce(b.tools, '{}')::text[] AS labelled_tools
FROM search_log l
LEFT JOIN LATERAL (
    SELECT array_agg(DISTINCT x.tool_name ORDER BY x.tool_name) AS tools
    FROM search_labels x
    WHERE x.search_id = l.id AND x.search_created_at = l.created_at
) b ON true
WHERE l.session_id = sqlc.arg(session_id)::text
  AND l.caller IS NOT DISTINCT FROM sqlc.narg(caller)::text
  AND (l.created_at, l.id) > (sqlc.arg(after_created_at)::timestamptz, sqlc.arg(after_id)::bigint)
ORDER BY l.created_at, l.id
LIMIT sqlc.arg(max_rows)::int;
