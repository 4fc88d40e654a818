-- Implicit labels: a tool an MCP session called after a find_tools of the same session
-- returned it (migration 0014, docs/analytics.md#labels).

-- name: RecordCallLabel :execrows
-- Labels the most recent search that returned tool_name among the find_tools searches the
-- session made, as the same caller (the same API key, or without a key the same caller
-- name), within `window` before the call; the call started `since` ago. Nothing when no
-- search qualifies. (A POST /search may pass the session's id as session_id: it is not the
-- session's find_tools. Searches logged before migration 0020 have no endpoint.)
-- A later call of the same tool after the same search keeps the first delay and marks the
-- label successful once any call succeeded.
WITH hit AS (
    SELECT l.id, l.created_at, r.pos
    FROM search_log l
    CROSS JOIN LATERAL (
        SELECT e.pos FROM jsonb_array_elements(l.results) WITH ORDINALITY AS e (value, pos)
        WHERE e.value ->> 'name' = sqlc.arg(tool_name)::text
        ORDER BY e.pos LIMIT 1
    ) r
    WHERE l.session_id = sqlc.arg(session_id)::text
      AND coalesce(l.endpoint, 'find_tools') = 'find_tools'
      AND l.created_at >= now() - sqlc.arg(since)::interval - sqlc.arg(label_window)::interval
      AND l.created_at <= now() - sqlc.arg(since)::interval
      AND l.caller_key_id IS NOT DISTINCT FROM sqlc.narg(caller_key_id)::bigint
      AND (sqlc.narg(caller_key_id)::bigint IS NOT NULL OR l.caller = sqlc.arg(caller)::text)
    ORDER BY l.created_at DESC, l.id DESC
    LIMIT 1
)
INSERT INTO search_labels (search_id, search_created_at, tool_name, label_source, rank, delay_ms, tool_source, success)
SELECT hit.id, hit.created_at, sqlc.arg(tool_name)::text, 'call', hit.pos,
       greatest(0, floor(extract(epoch FROM now() - sqlc.arg(since)::interval - hit.created_at) * 1000))::bigint,
       sqlc.arg(tool_source)::text, sqlc.arg(success)::boolean
FROM hit
ON CONFLICT (search_id, tool_name, label_source) DO UPDATE
    SET success = search_labels.success OR EXCLUDED.success;

-- name: ListSearchLabels :many
-- The labels of a search, best rank first.
SELECT * FROM search_labels WHERE search_id = $1 ORDER BY rank, tool_name, label_source;
