-- Catalog: sources and their tools.

-- name: CreateSource :one
INSERT INTO sources (name, kind, config, sync_interval, review_mode)
VALUES ($1, $2, $3, $4, $5)
RETURNING *;

-- name: GetSourceByName :one
SELECT * FROM sources WHERE name = $1;

-- name: ListSources :many
SELECT * FROM sources ORDER BY name;

-- name: DeleteSource :execrows
DELETE FROM sources WHERE name = $1;

-- name: LockSource :exec
-- Serializes writers of one source's catalog for the rest of the transaction.
SELECT pg_advisory_xact_lock(74200, sqlc.arg(source_id)::int);

-- name: InsertTool :one
INSERT INTO tools (source_id, name, original_name, title, description, input_schema,
                   output_schema, annotations, content_hash, review_state)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
RETURNING id;

-- name: UpdateToolDefinition :exec
UPDATE tools
SET title = $2, description = $3, input_schema = $4, output_schema = $5, annotations = $6,
    content_hash = $7, review_state = $8, updated_at = now()
WHERE id = $1;

-- name: DeleteToolsByID :execrows
DELETE FROM tools WHERE id = ANY(sqlc.arg(ids)::bigint[]);

-- name: InsertRevision :exec
INSERT INTO tool_revisions (source_id, tool_name, action, old_hash, new_hash, changed_fields, definition, status)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8);

-- name: GetToolByName :one
SELECT * FROM tools WHERE name = $1;

-- name: CountToolsBySource :one
SELECT count(*) FROM tools WHERE source_id = $1;

-- name: EnsureCatalogSource :one
-- Returns the source called name, creating it as a catalog source when it does not exist.
INSERT INTO sources (name, kind) VALUES ($1, 'catalog')
ON CONFLICT (name) DO UPDATE SET updated_at = sources.updated_at
RETURNING *;

-- name: InsertFinishedSyncRun :one
INSERT INTO sync_runs (source_id, state, created, updated, deleted, unchanged, skipped, error, started_at, finished_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now())
RETURNING *;

-- name: LastSyncRun :one
SELECT * FROM sync_runs WHERE source_id = $1 ORDER BY started_at DESC, id DESC LIMIT 1;
