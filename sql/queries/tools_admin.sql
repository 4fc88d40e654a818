-- Operator switches on tools.

-- name: SetToolEnabled :one
UPDATE tools SET enabled = sqlc.arg(enabled), updated_at = now()
WHERE name = sqlc.arg(name)
RETURNING name, enabled, updated_at;
