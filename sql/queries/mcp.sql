-- MCP gateway: sessions, their bound tools, and the tool and source a proxied call needs.

-- name: UpsertMCPSession :exec
INSERT INTO mcp_sessions (id, caller, caller_key_id, sources, state)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (id) DO UPDATE SET state = EXCLUDED.state, last_seen_at = now();

-- name: EnsureMCPSession :exec
-- A session that skipped the initialize handshake (a SEP-2575 client) is stored on its
-- first binding, with an empty state. A binding counts as activity.
INSERT INTO mcp_sessions (id, caller, caller_key_id, sources, state)
VALUES ($1, $2, $3, $4, '{}'::jsonb)
ON CONFLICT (id) DO UPDATE SET last_seen_at = now();

-- name: GetMCPSession :one
SELECT * FROM mcp_sessions WHERE id = $1;

-- name: TouchMCPSession :exec
UPDATE mcp_sessions SET last_seen_at = now() WHERE id = $1;

-- name: DeleteIdleMCPSessions :execrows
-- Sessions unused for longer than `idle` go, with their bindings.
DELETE FROM mcp_sessions WHERE last_seen_at < now() - sqlc.arg(idle)::interval;

-- name: StoredMCPSessions :many
-- The sessions among ids that are still stored: the others were ended elsewhere (DELETE
-- on another instance, their key revoked, the retention job).
SELECT id FROM mcp_sessions WHERE id = ANY(sqlc.arg(ids)::text[]);

-- name: DeleteMCPSession :exec
DELETE FROM mcp_sessions WHERE id = $1;

-- name: BindSessionTools :exec
-- Binds tools given best first; the best gets the newest bound_at, so it is the last one
-- dropped. Binding a tool again (a later statement) makes it newer. statement_timestamp(),
-- not clock_timestamp(): the clock moves on between rows by more than the 1 µs steps, which
-- made the worst-ranked tools the newest.
INSERT INTO mcp_session_tools (session_id, tool_name, bound_at)
SELECT sqlc.arg(session_id), n.name, statement_timestamp() - n.rank * interval '1 microsecond'
FROM unnest(sqlc.arg(names)::text[]) WITH ORDINALITY AS n (name, rank)
ON CONFLICT (session_id, tool_name) DO UPDATE SET bound_at = EXCLUDED.bound_at;

-- name: TrimSessionTools :exec
-- Keeps the newest `keep` bindings of a session.
DELETE FROM mcp_session_tools m
WHERE m.session_id = sqlc.arg(session_id)
  AND m.tool_name NOT IN (
    SELECT k.tool_name FROM mcp_session_tools k
    WHERE k.session_id = sqlc.arg(session_id)
    ORDER BY k.bound_at DESC, k.tool_name
    LIMIT sqlc.arg(keep)::int);

-- name: ListSessionTools :many
-- The current definitions of a session's bound tools, oldest binding first; tools since
-- deleted, disabled or held for review are left out.
SELECT t.name, t.title, t.description, t.input_schema, t.output_schema, t.annotations,
       t.content_hash, s.name AS source_name
FROM mcp_session_tools m
JOIN tools t ON t.name = m.tool_name
JOIN sources s ON s.id = t.source_id
WHERE m.session_id = $1 AND t.enabled AND t.review_state = 'approved'
ORDER BY m.bound_at, m.tool_name;

-- name: GetCallableTool :one
-- A tool with what is needed to call it on its source server.
SELECT t.name, t.original_name, t.input_schema, t.content_hash,
       s.name AS source_name, s.kind AS source_kind, s.config AS source_config
FROM tools t
JOIN sources s ON s.id = t.source_id
WHERE t.name = $1 AND t.enabled AND t.review_state = 'approved';
