-- Catalog: sources and their tools.

-- name: CreateSource :one
INSERT INTO sources (name, kind, config, sync_interval, review_mode)
VALUES ($1, $2, $3, $4, $5)
RETURNING *;

-- name: GetSourceByName :one
SELECT * FROM sources WHERE name = $1;

-- name: ListSources :many
SELECT * FROM sources ORDER BY name;

-- name: ListSourceSummaries :many
-- Every source, or only the one called name, with its tool counts and its last sync run, in
-- one statement (GET /v1/sources). A tool is enriched when each of the three enrichment
-- steps (profile, questions, topics) has an output for its current content hash (or a
-- recorded failure, {"failed": reason}: enrichment_failed counts those tools), embedded
-- when it has a vector in the current vector set of the active weight profile, and indexed
-- when the lexical index holds it and no change of it waits in the index's queue; pending
-- when it is not yet both enriched and embedded. A source is fully enriched when no tool is
-- pending and none waits in the lexical index's queue (its enriched fields are searchable).
-- Everything is joined by hash, once per table: the enrichments of the current hashes are
-- counted per tool first, narrowed to a flag before they are grouped (the outputs
-- themselves are not carried through the sort), and the queue is read once, not probed per
-- tool. About 140 ms for 29,000 tools on a 2-core machine (it was 670 ms, and 2 s for
-- 50,000 tools whose changes all waited in the queue). A source without a sync run has
-- run_state '' and every other run column NULL: coalesce, because sqlc gives the typed
-- sync_runs.state (sqlc.yaml) no pointer on the nullable side of a LEFT JOIN
-- (sqlc-dev/sqlc#2632). The auth_ columns are the OAuth authorization of an mcp_http source
-- configured for OAuth (internal/upstreamauth); auth_state is empty when it has none yet.
WITH enr AS (
    SELECT x.tool_id, count(*) AS steps, count(*) FILTER (WHERE x.failed) AS failed
    FROM (
        SELECT e.tool_id, e.output ? 'failed' AS failed
        FROM tool_enrichments e
        JOIN tools t ON t.id = e.tool_id AND t.content_hash = e.content_hash
        -- enriched means the three steps every enricher makes (the heuristic's expansion is a fourth)
        WHERE e.step <> 'expansion'
          AND (sqlc.narg(name)::text IS NULL OR t.source_id = (SELECT id FROM sources WHERE name = sqlc.narg(name)))
        OFFSET 0
    ) x
    GROUP BY x.tool_id
), counts AS (
    SELECT t.source_id,
           count(*) AS tools,
           count(*) FILTER (WHERE en.steps = 3) AS enriched,
           count(*) FILTER (WHERE en.failed > 0) AS enrichment_failed,
           count(v.tool_id) AS embedded,
           count(*) FILTER (WHERE en.steps = 3 AND v.tool_id IS NOT NULL) AS complete,
           count(d.tool_id) FILTER (WHERE q.tool_id IS NULL) AS indexed,
           count(q.tool_id) AS queued
    FROM tools t
    LEFT JOIN enr en ON en.tool_id = t.id
    LEFT JOIN tool_vectors v
           ON v.tool_id = t.id AND v.set_id = (SELECT p.current_set FROM weight_profiles p WHERE p.is_active)
    LEFT JOIN search_docs d ON d.tool_id = t.id
    LEFT JOIN (SELECT DISTINCT sq.tool_id FROM search_queue sq) q ON q.tool_id = t.id
    WHERE sqlc.narg(name)::text IS NULL OR t.source_id = (SELECT id FROM sources WHERE name = sqlc.narg(name))
    GROUP BY t.source_id
)
SELECT sqlc.embed(s),
       coalesce(c.tools, 0)::bigint AS tools, coalesce(c.enriched, 0)::bigint AS enriched,
       coalesce(c.enrichment_failed, 0)::bigint AS enrichment_failed,
       coalesce(c.embedded, 0)::bigint AS embedded, coalesce(c.indexed, 0)::bigint AS indexed,
       coalesce(c.tools - c.complete, 0)::bigint AS pending,
       (coalesce(c.tools - c.complete, 0) = 0 AND coalesce(c.queued, 0) = 0)::boolean AS fully_enriched,
       coalesce(r.state, '') AS run_state, r.created AS run_created, r.updated AS run_updated, r.deleted AS run_deleted,
       r.unchanged AS run_unchanged, r.pending AS run_pending, r.skipped AS run_skipped,
       r.started_at AS run_started_at, r.finished_at AS run_finished_at, r.error AS run_error,
       coalesce(o.state, '') AS auth_state, o.error AS auth_error, o.issuer AS auth_issuer,
       o.expires_at AS auth_expires_at, o.authorized_at AS auth_authorized_at
FROM sources s
LEFT JOIN counts c ON c.source_id = s.id
LEFT JOIN source_oauth o ON o.source_id = s.id
LEFT JOIN sync_runs r
       ON r.id = (SELECT r2.id FROM sync_runs r2 WHERE r2.source_id = s.id ORDER BY r2.started_at DESC, r2.id DESC LIMIT 1)
WHERE sqlc.narg(name)::text IS NULL OR s.name = sqlc.narg(name)
ORDER BY s.name;

-- name: DeleteSource :execrows
DELETE FROM sources WHERE name = $1;

-- name: LockSource :exec
-- Serializes writers of one source's catalog for the rest of the transaction (key
-- locks.Source of internal/locks/locks.go).
SELECT pg_advisory_xact_lock(74200, sqlc.arg(source_id)::int);

-- name: LockSourceRow :one
-- Keeps the source from being deleted until the transaction ends. A deletion of the source
-- that is already under way is waited for, and then no row comes back.
SELECT id FROM sources WHERE id = $1 FOR KEY SHARE;

-- name: LockTools :exec
-- Locks the given tools for the rest of the transaction, in id order (a locking SELECT locks
-- rows in the order of its ORDER BY): catalog.Apply takes here every row lock it needs
-- before it writes anything.
SELECT id FROM tools WHERE id = ANY(sqlc.arg(ids)::bigint[]) ORDER BY id FOR UPDATE;

-- name: InsertTools :many
-- Inserts many tools in one statement, one array element per tool. JSON travels as text,
-- and an empty string stands for NULL (no title, output schema or annotations: a present
-- one is never empty).
INSERT INTO tools (source_id, name, original_name, title, description, input_schema,
                   output_schema, annotations, content_hash, review_state)
SELECT sqlc.arg(source_id)::bigint, u.name, u.original_name, nullif(u.title, ''), u.description,
       u.input_schema::jsonb, nullif(u.output_schema, '')::jsonb, nullif(u.annotations, '')::jsonb,
       u.content_hash, 'approved'
FROM (SELECT unnest(sqlc.arg(names)::text[]) AS name, unnest(sqlc.arg(original_names)::text[]) AS original_name,
             unnest(sqlc.arg(titles)::text[]) AS title, unnest(sqlc.arg(descriptions)::text[]) AS description,
             unnest(sqlc.arg(input_schemas)::text[]) AS input_schema,
             unnest(sqlc.arg(output_schemas)::text[]) AS output_schema,
             unnest(sqlc.arg(annotations)::text[]) AS annotations,
             unnest(sqlc.arg(content_hashes)::text[]) AS content_hash) u
RETURNING id, original_name;

-- name: UpdateToolDefinitions :exec
-- Writes new definitions of many tools in one statement, making them visible (approved).
-- Same encoding as InsertTools.
UPDATE tools t
SET title = nullif(u.title, ''), description = u.description, input_schema = u.input_schema::jsonb,
    output_schema = nullif(u.output_schema, '')::jsonb, annotations = nullif(u.annotations, '')::jsonb,
    content_hash = u.content_hash, review_state = 'approved', updated_at = now()
FROM (SELECT unnest(sqlc.arg(ids)::bigint[]) AS id, unnest(sqlc.arg(titles)::text[]) AS title,
             unnest(sqlc.arg(descriptions)::text[]) AS description,
             unnest(sqlc.arg(input_schemas)::text[]) AS input_schema,
             unnest(sqlc.arg(output_schemas)::text[]) AS output_schema,
             unnest(sqlc.arg(annotations)::text[]) AS annotations,
             unnest(sqlc.arg(content_hashes)::text[]) AS content_hash) u
WHERE t.id = u.id;

-- name: SetToolReviewStates :exec
UPDATE tools t SET review_state = u.review_state, updated_at = now()
FROM (SELECT unnest(sqlc.arg(ids)::bigint[]) AS id, unnest(sqlc.arg(review_states)::text[]) AS review_state) u
WHERE t.id = u.id;

-- name: UpdateToolDefinition :exec
UPDATE tools
SET title = $2, description = $3, input_schema = $4, output_schema = $5, annotations = $6,
    content_hash = $7, review_state = $8, updated_at = now()
WHERE id = $1;

-- name: DeleteToolsByID :execrows
DELETE FROM tools WHERE id = ANY(sqlc.arg(ids)::bigint[]);

-- name: InsertRevisions :exec
-- Records many revisions in one statement, in the order given. An empty string stands for a
-- NULL hash or definition; changed_fields travel as the field names joined by commas.
INSERT INTO tool_revisions (source_id, tool_name, action, old_hash, new_hash, changed_fields, definition, status)
SELECT sqlc.arg(source_id)::bigint, u.tool_name, u.action, nullif(u.old_hash, ''), nullif(u.new_hash, ''),
       string_to_array(u.changed_fields, ','), nullif(u.definition, '')::jsonb, u.status
FROM (SELECT unnest(sqlc.arg(tool_names)::text[]) AS tool_name, unnest(sqlc.arg(actions)::text[]) AS action,
             unnest(sqlc.arg(old_hashes)::text[]) AS old_hash, unnest(sqlc.arg(new_hashes)::text[]) AS new_hash,
             unnest(sqlc.arg(changed_fields)::text[]) AS changed_fields,
             unnest(sqlc.arg(definitions)::text[]) AS definition,
             unnest(sqlc.arg(statuses)::text[]) AS status) u;

-- name: GetToolByName :one
SELECT * FROM tools WHERE name = $1;

-- name: ListToolNamesByFunctionPrefix :many
-- The names of a source's tools whose function name (catalog.FunctionName) starts with
-- prefix before its hash: the candidates a mapped function name can stand for.
SELECT t.name
FROM tools t JOIN sources s ON s.id = t.source_id
WHERE s.name = sqlc.arg(source)::text
  AND left(regexp_replace(t.name, '[^A-Za-z0-9_-]+', '_', 'g'), 55) = sqlc.arg(prefix)::text;

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
