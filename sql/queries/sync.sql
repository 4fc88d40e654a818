-- Sync of MCP sources, definition history and review.

-- name: GetSourceByID :one
SELECT * FROM sources WHERE id = $1;

-- name: UpdateSourceSettings :one
UPDATE sources SET config = $2, sync_interval = $3, review_mode = $4, updated_at = now()
WHERE id = $1
RETURNING *;

-- name: ListToolStates :many
SELECT id, original_name, content_hash, review_state FROM tools WHERE source_id = $1;

-- name: GetToolDefinitionByID :one
SELECT original_name, title, description, input_schema, output_schema, annotations FROM tools WHERE id = $1;

-- name: SetToolReviewState :exec
UPDATE tools SET review_state = $2, updated_at = now() WHERE id = $1;

-- name: FindHeldRevision :one
-- A held (pending or rejected) change of a tool from definition old_hash to new_hash.
SELECT id, status FROM tool_revisions
WHERE tool_name = $1 AND old_hash = sqlc.arg(old_hash) AND new_hash = sqlc.arg(new_hash)
  AND status IN ('pending', 'rejected')
ORDER BY id DESC LIMIT 1;

-- name: SupersedePendingRevisions :execrows
-- Closes a tool's pending changes that the server no longer serves.
UPDATE tool_revisions SET status = 'rejected', decided_at = now()
WHERE tool_name = $1 AND status = 'pending';

-- name: LatestHeldRevision :one
-- The newest held change of a tool's current definition: what approve applies.
SELECT * FROM tool_revisions
WHERE tool_name = $1 AND old_hash = sqlc.arg(old_hash) AND status IN ('pending', 'rejected')
ORDER BY id DESC LIMIT 1;

-- name: DecideRevision :exec
UPDATE tool_revisions SET status = $2, decided_at = now() WHERE id = $1;

-- name: ToolHistory :many
SELECT * FROM tool_revisions WHERE tool_name = $1 ORDER BY id DESC LIMIT $2;

-- name: StartSyncRun :one
INSERT INTO sync_runs (source_id, state) VALUES ($1, 'running') RETURNING id;

-- name: FinishSyncRun :exec
UPDATE sync_runs
SET state = $2, created = $3, updated = $4, deleted = $5, unchanged = $6, pending = $7,
    skipped = $8, error = $9, finished_at = now()
WHERE id = $1;

-- name: AbandonSyncRuns :execrows
-- Sync runs still 'running' longer after their start than the job running them can last:
-- only a process that stopped mid-sync leaves them, and they would show as running forever.
UPDATE sync_runs
SET state = 'failed', finished_at = now(),
    error = 'abandoned: the process running this sync stopped before recording its end'
WHERE state = 'running' AND started_at < now() - make_interval(secs => sqlc.arg(after_secs)::float8);

-- name: SourcesDueForSync :many
-- MCP sources with an interval whose last sync attempt started longer ago than it.
SELECT s.id FROM sources s
WHERE s.kind IN ('mcp_stdio', 'mcp_http') AND s.sync_interval IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM sync_runs r WHERE r.source_id = s.id AND r.started_at > now() - s.sync_interval);

-- name: ListSourcesByKind :many
SELECT * FROM sources WHERE kind = $1 ORDER BY id;
