-- Operator switches on tools.

-- name: SetToolEnabled :one
UPDATE tools SET enabled = sqlc.arg(enabled), updated_at = now()
WHERE name = sqlc.arg(name)
RETURNING name, enabled, updated_at;

-- name: JobSubjects :many
-- The names behind the ids River jobs carry in their args (GET /admin/jobs): sources of
-- syncs, tools of enrichments, the profiles of re-weights' vector sets, the profiles tunes
-- create. An id that is gone has no row.
SELECT 'source'::text AS kind, s.id, s.name FROM sources s WHERE s.id = ANY (sqlc.arg(source_ids)::bigint[])
UNION ALL
SELECT 'tool', t.id, t.name FROM tools t WHERE t.id = ANY (sqlc.arg(tool_ids)::bigint[])
UNION ALL
SELECT 'profile', v.id, p.name FROM vector_sets v JOIN weight_profiles p ON p.id = v.profile_id
WHERE v.id = ANY (sqlc.arg(set_ids)::bigint[])
UNION ALL
SELECT 'tune', u.id, u.profile FROM profile_tunes u WHERE u.id = ANY (sqlc.arg(tune_ids)::bigint[]);
