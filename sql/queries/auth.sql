-- Access control: API keys and their rate-limit counters.

-- name: CreateAPIKey :one
INSERT INTO api_keys (name, prefix, secret_hash, scope, sources, rate_per_min, plan, tenant)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
RETURNING *;

-- name: GetAPIKeyByPrefix :one
SELECT * FROM api_keys WHERE prefix = $1;

-- name: GetActiveAPIKeyByName :one
SELECT * FROM api_keys WHERE name = $1 AND revoked_at IS NULL;

-- name: ListAPIKeys :many
SELECT * FROM api_keys ORDER BY created_at, id;

-- name: RevokeAPIKey :many
-- Revokes the key whose prefix is ref, or the active key named ref. A key revoked earlier
-- keeps its first revocation time.
UPDATE api_keys SET revoked_at = coalesce(revoked_at, sqlc.arg(now)::timestamptz)
WHERE prefix = sqlc.arg(ref) OR (name = sqlc.arg(ref) AND revoked_at IS NULL)
RETURNING *;

-- name: RevokeAPIKeyByPrefix :one
UPDATE api_keys SET revoked_at = coalesce(revoked_at, sqlc.arg(now)::timestamptz)
WHERE prefix = sqlc.arg(prefix)
RETURNING *;

-- name: DeleteMemoriesOfKeys :execrows
-- A revoked key's memories (tool_memories): what its searches taught stops counting at once.
DELETE FROM tool_memories WHERE key_id = ANY(sqlc.arg(key_ids)::bigint[]);

-- name: DeleteMCPSessionsOfKeys :execrows
-- Ends the MCP sessions of revoked keys (their bound tools go with them).
DELETE FROM mcp_sessions WHERE caller_key_id = ANY(sqlc.arg(key_ids)::bigint[]);

-- name: CountAPIKeyUse :one
-- Counts one request of a key in its window and returns the window's count. The same
-- statement refreshes last_used_at, at most once a minute per key, so a busy key does not
-- rewrite its api_keys row on every request.
WITH touch AS (
    UPDATE api_keys SET last_used_at = sqlc.arg(now)::timestamptz
    WHERE id = sqlc.arg(key_id)
      AND (last_used_at IS NULL OR last_used_at < sqlc.arg(now)::timestamptz - interval '1 minute')
)
INSERT INTO api_key_rate AS r (key_id, window_start, hits)
VALUES (sqlc.arg(key_id), sqlc.arg(window_start), 1)
ON CONFLICT (key_id, window_start) DO UPDATE SET hits = r.hits + 1
RETURNING hits;

-- name: DeleteAPIKeyRateBefore :execrows
DELETE FROM api_key_rate WHERE window_start < $1;

-- name: ExistingSourceNames :many
-- The names among names that name a source, for checking a new key's source list.
SELECT name FROM sources WHERE name = ANY(sqlc.arg(names)::text[]);

-- name: CountOAuthSubjectUse :one
-- Counts one request of an OAuth subject in its window and returns the window's count.
INSERT INTO oauth_subject_rate AS r (subject, window_start, hits)
VALUES (sqlc.arg(subject), sqlc.arg(window_start), 1)
ON CONFLICT (subject, window_start) DO UPDATE SET hits = r.hits + 1
RETURNING hits;

-- name: DeleteOAuthSubjectRateBefore :execrows
DELETE FROM oauth_subject_rate WHERE window_start < $1;
