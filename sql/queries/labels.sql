-- Implicit labels: a tool an MCP session called after a find_tools of the same session
-- returned it (migration 0014, docs/analytics.md#labels).

-- name: DatabaseNow :one
-- The database's clock, the clock of search_log.created_at: a call's start on it.
SELECT now()::timestamptz AS now;

-- name: RecordCallLabel :one
-- Labels the most recent search that returned tool_name among the find_tools searches the
-- session made, as the same caller (the same API key, or without a key the same caller
-- name), within `window` before the call, which started at started_at (DatabaseNow when it
-- began). Nothing when no search qualifies. (A POST /search may pass the session's id as
-- session_id: it is not the session's find_tools. Searches logged before migration 0020
-- have no endpoint.)
-- A later call of the same tool after the same search keeps the first delay and marks the
-- label successful once any call succeeded.
-- Returns, for the metrics, the profile that served the labelled search (search_log.profile,
-- else the active profile's name) and whether the label is new (not a later call); no row
-- when no search qualifies. New is what the insert did (xmax is 0 on a row it inserted, set
-- on one its ON CONFLICT updated), so of two concurrent calls only one counts: a snapshot
-- read of search_labels would show both that the label does not exist yet.
WITH hit AS (
    SELECT l.id, l.created_at, r.pos, l.profile
    FROM search_log l
    CROSS JOIN LATERAL (
        SELECT e.pos FROM jsonb_array_elements(l.results) WITH ORDINALITY AS e (value, pos)
        WHERE e.value ->> 'name' = sqlc.arg(tool_name)::text
        ORDER BY e.pos LIMIT 1
    ) r
    WHERE l.session_id = sqlc.arg(session_id)::text
      AND coalesce(l.endpoint, 'find_tools') = 'find_tools'
      AND l.created_at >= sqlc.arg(started_at)::timestamptz - sqlc.arg(label_window)::interval
      AND l.created_at <= sqlc.arg(started_at)::timestamptz
      AND l.caller_key_id IS NOT DISTINCT FROM sqlc.narg(caller_key_id)::bigint
      AND (sqlc.narg(caller_key_id)::bigint IS NOT NULL OR l.caller = sqlc.arg(caller)::text)
    ORDER BY l.created_at DESC, l.id DESC
    LIMIT 1
), ins AS (
    INSERT INTO search_labels (search_id, search_created_at, tool_name, label_source, rank, delay_ms, tool_source, success)
    SELECT hit.id, hit.created_at, sqlc.arg(tool_name)::text, 'call', hit.pos,
           greatest(0, floor(extract(epoch FROM sqlc.arg(started_at)::timestamptz - hit.created_at) * 1000))::bigint,
           sqlc.arg(tool_source)::text, sqlc.arg(success)::boolean
    FROM hit
    ON CONFLICT (search_id, tool_name, label_source) DO UPDATE
        SET success = search_labels.success OR EXCLUDED.success
    RETURNING search_id, (xmax = 0) AS inserted
)
SELECT coalesce(h.profile, (SELECT wp.name FROM weight_profiles wp WHERE wp.is_active), '')::text AS profile,
       ins.inserted::boolean AS new_label
FROM ins
JOIN hit h ON h.id = ins.search_id;

-- name: ListSearchLabels :many
-- The labels of a search, best rank first.
SELECT * FROM search_labels WHERE search_id = $1 ORDER BY rank, tool_name, label_source;
