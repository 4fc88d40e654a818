-- Sync of MCP sources, definition history and review.

-- name: GetSourceByID :one
SELECT * FROM sources WHERE id = $1;

-- name: UpdateSourceSettings :one
UPDATE sources SET config = $2, sync_interval = $3, review_mode = $4, updated_at = now()
WHERE id = $1
RETURNING *;

-- name: ListToolStates :many
SELECT id, original_name, content_hash, review_state FROM tools WHERE source_id = $1;

-- name: ListChangedTools :many
-- The stored definitions of tools about to change (ids), and whether each one's change to
-- its new hash (new_hashes, in the order of ids) is already held: a pending or rejected
-- revision from the current hash to the new one exists. held is false unless review is set.
SELECT t.id, t.original_name, t.title, t.description, t.input_schema, t.output_schema, t.annotations,
       (sqlc.arg(review)::boolean AND EXISTS (
           SELECT 1 FROM tool_revisions r
           WHERE r.tool_name = t.name AND r.old_hash = t.content_hash AND r.new_hash = u.new_hash
             AND r.status IN ('pending', 'rejected')))::boolean AS held
FROM (SELECT unnest(sqlc.arg(ids)::bigint[]) AS id, unnest(sqlc.arg(new_hashes)::text[]) AS new_hash) u
JOIN tools t ON t.id = u.id;

-- name: SupersedePendingRevisions :execrows
-- Closes a tool's pending changes that the server no longer serves.
UPDATE tool_revisions SET status = 'rejected', decided_at = now()
WHERE tool_name = $1 AND status = 'pending';

-- name: SupersedePendingRevisionsOf :exec
-- SupersedePendingRevisions for many tools at once.
UPDATE tool_revisions SET status = 'rejected', decided_at = now()
WHERE tool_name = ANY(sqlc.arg(tool_names)::text[]) AND status = 'pending';

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

-- name: ListSourcesOfKinds :many
SELECT * FROM sources WHERE kind = ANY(sqlc.arg(kinds)::text[]) ORDER BY id;
