-- Listings an operator pages through: the catalog's tools and a source's sync runs. Each
-- page is a keyset page read along an index, so that a page costs about its own rows
-- whatever the catalog's size and however deep it is.

-- name: ListTools :many
-- A page of every source's tools in name order, after the name after (GET /v1/tools
-- without a source): read along tools_name_key, the unique index on name. sources, when
-- set, limits the page to those sources' tools; review_state and q (a part of the name,
-- any case) filter it. A tool is enriched when each of the three enrichment steps has an
-- output for its current content hash, embedded when it has a vector in the active
-- profile's current set (as ListSourceSummaries counts them).
SELECT t.name, t.original_name, s.name AS source, t.title, t.description, t.enabled, t.review_state,
       t.updated_at,
       (SELECT count(*) FROM tool_enrichments e
        WHERE e.tool_id = t.id AND e.content_hash = t.content_hash AND e.step <> 'expansion') = 3 AS enriched,
       EXISTS (SELECT 1 FROM tool_vectors v
               WHERE v.tool_id = t.id AND v.set_id = (SELECT p.current_set FROM weight_profiles p WHERE p.is_active)) AS embedded
FROM tools t
JOIN sources s ON s.id = t.source_id
WHERE t.name > sqlc.arg(after)::text
  AND (sqlc.narg(sources)::text[] IS NULL OR s.name = ANY (sqlc.narg(sources)::text[]))
  AND (sqlc.narg(review_state)::text IS NULL OR t.review_state = sqlc.narg(review_state)::text)
  AND (sqlc.narg(q)::text IS NULL OR strpos(lower(t.name), lower(sqlc.narg(q)::text)) > 0)
ORDER BY t.name
LIMIT sqlc.arg(lim);

-- name: ListSourceTools :many
-- A page of one source's tools in the order of their original names (the names its server
-- or catalog gives them), after the original name after: read along
-- tools_source_id_original_name_key. Filters and columns as ListTools.
SELECT t.name, t.original_name, s.name AS source, t.title, t.description, t.enabled, t.review_state,
       t.updated_at,
       (SELECT count(*) FROM tool_enrichments e
        WHERE e.tool_id = t.id AND e.content_hash = t.content_hash AND e.step <> 'expansion') = 3 AS enriched,
       EXISTS (SELECT 1 FROM tool_vectors v
               WHERE v.tool_id = t.id AND v.set_id = (SELECT p.current_set FROM weight_profiles p WHERE p.is_active)) AS embedded
FROM tools t
JOIN sources s ON s.id = t.source_id
WHERE t.source_id = sqlc.arg(source_id)
  AND t.original_name > sqlc.arg(after)::text
  AND (sqlc.narg(review_state)::text IS NULL OR t.review_state = sqlc.narg(review_state)::text)
  AND (sqlc.narg(q)::text IS NULL OR strpos(lower(t.name), lower(sqlc.narg(q)::text)) > 0)
ORDER BY t.original_name
LIMIT sqlc.arg(lim);

-- name: ListSyncRuns :many
-- A page of a source's sync runs, newest first, before the run before (none: from the
-- newest): read along sync_runs_source_started.
SELECT r.* FROM sync_runs r
WHERE r.source_id = sqlc.arg(source_id)
  AND (sqlc.narg(before)::bigint IS NULL
       OR (r.started_at, r.id) < (SELECT b.started_at, b.id FROM sync_runs b
                                  WHERE b.id = sqlc.narg(before)::bigint AND b.source_id = sqlc.arg(source_id)))
ORDER BY r.started_at DESC, r.id DESC
LIMIT sqlc.arg(lim);

-- name: ExportTools :many
-- The tools a search can return (enabled and approved), for a vendor's deferred-tool export
-- (GET /v1/tools/export): at most lim, by source then name. sources, when set, limits them
-- to those sources' tools.
SELECT t.name, s.name AS source, t.description, t.input_schema
FROM tools t
JOIN sources s ON s.id = t.source_id
WHERE t.enabled AND t.review_state = 'approved'
  AND (sqlc.narg(sources)::text[] IS NULL OR s.name = ANY (sqlc.narg(sources)::text[]))
ORDER BY s.name, t.name
LIMIT sqlc.arg(lim);
