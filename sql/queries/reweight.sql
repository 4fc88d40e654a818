-- Weight profiles and re-weighting: profile administration, building a new vector set for a
-- profile from the stored component vectors, and the atomic switch to it.

-- name: ListProfiles :many
SELECT * FROM weight_profiles ORDER BY name;

-- name: GetProfileByName :one
SELECT * FROM weight_profiles WHERE name = $1;

-- name: GetProfileByID :one
SELECT * FROM weight_profiles WHERE id = $1;

-- name: LockProfileByName :one
SELECT * FROM weight_profiles WHERE name = $1 FOR UPDATE;

-- name: LockProfileByID :one
SELECT * FROM weight_profiles WHERE id = $1 FOR UPDATE;

-- name: PutProfile :one
-- Creates the profile or changes its definition (its fusion weights too: NULL, the
-- settings'); its vectors change only when a re-weight completes. xmax = 0 tells an insert
-- from an update.
INSERT INTO weight_profiles (name, strategy, weights, weight_lexical, weight_vector)
VALUES ($1, $2, $3, sqlc.narg(weight_lexical)::float8, sqlc.narg(weight_vector)::float8)
ON CONFLICT (name) DO UPDATE SET strategy = excluded.strategy, weights = excluded.weights,
    weight_lexical = excluded.weight_lexical, weight_vector = excluded.weight_vector, updated_at = now()
RETURNING *, (xmax = 0)::boolean AS created;

-- name: DeleteProfile :exec
DELETE FROM weight_profiles WHERE id = $1;

-- name: DeactivateProfiles :exec
UPDATE weight_profiles SET is_active = false, updated_at = now() WHERE is_active AND id <> $1;

-- name: ActivateProfile :exec
UPDATE weight_profiles SET is_active = true, updated_at = now() WHERE id = $1 AND NOT is_active;

-- name: GetVectorSet :one
SELECT * FROM vector_sets WHERE id = $1;

-- name: GetBuildingSet :one
SELECT * FROM vector_sets WHERE profile_id = $1 AND state = 'building' ORDER BY id DESC LIMIT 1;

-- name: CreateBuildingSet :one
-- The set keeps the profile's weights of now (migration 0010).
INSERT INTO vector_sets (profile_id, state, total, strategy, weights)
SELECT p.id, 'building', (SELECT count(*) FROM tools t), p.strategy, p.weights
FROM weight_profiles p WHERE p.id = $1
RETURNING *;

-- name: CountSetVectors :one
SELECT count(*) FROM tool_vectors WHERE set_id = $1;

-- name: StartSetBuild :exec
-- (Re)starts a build: total is the catalog's size now.
UPDATE vector_sets SET total = (SELECT count(*) FROM tools t), error = NULL
WHERE vector_sets.id = sqlc.arg(id) AND vector_sets.state = 'building';

-- name: ListToolIDsAfter :many
SELECT id FROM tools WHERE id > $1 ORDER BY id LIMIT $2;

-- name: ListComponentVectorsMissingFromSet :many
-- The embedded components of the given tools that have no vector in the set yet. The tools
-- already in the set are found by one primary-key probe per tool of the batch (LATERAL ...
-- LIMIT 1 keeps it a probe): an anti-join would let the planner read the whole partition,
-- which grows to the catalog's size, in every batch.
SELECT c.tool_id, c.kind, c.ordinal, c.embedding
FROM tool_components c
WHERE c.tool_id = ANY(sqlc.arg(tool_ids)::bigint[]) AND c.embedding IS NOT NULL
  AND c.tool_id <> ALL (ARRAY(
      SELECT b.id FROM unnest(sqlc.arg(tool_ids)::bigint[]) AS b (id)
      CROSS JOIN LATERAL (SELECT 1 FROM tool_vectors v WHERE v.set_id = sqlc.arg(set_id) AND v.tool_id = b.id LIMIT 1) present))
ORDER BY c.tool_id, c.kind, c.ordinal;

-- name: ListComponentVectors :many
SELECT c.tool_id, c.kind, c.ordinal, c.embedding
FROM tool_components c
WHERE c.tool_id = ANY(sqlc.arg(tool_ids)::bigint[]) AND c.embedding IS NOT NULL
ORDER BY c.tool_id, c.kind, c.ordinal;

-- name: ListToolsChangedSince :many
-- Tools whose components were written at or after the given time (the catch-up pass).
SELECT DISTINCT tool_id FROM tool_components WHERE updated_at >= $1 ORDER BY tool_id;

-- name: InsertToolVector :batchexec
-- A concurrent enrichment job that already wrote a fresher vector wins. A tool deleted
-- meanwhile gets none: the key-share lock waits for a delete in flight and then finds no
-- row, where a plain insert would fail the tool's foreign key and the batch with it.
INSERT INTO tool_vectors (set_id, tool_id, embedding)
SELECT sqlc.arg(set_id)::bigint, t.id, sqlc.arg(embedding)::vector
FROM tools t WHERE t.id = sqlc.arg(tool_id)::bigint
FOR KEY SHARE OF t
ON CONFLICT (set_id, tool_id) DO NOTHING;

-- name: ReplaceToolVector :batchexec
-- The re-weight's catch-up: the vector recomputed from the components as they are now
-- replaces the set's. A tool deleted since its components were read gets none, as in
-- InsertToolVector (a plain upsert failed the tool's foreign key and the batch with it).
INSERT INTO tool_vectors (set_id, tool_id, embedding)
SELECT sqlc.arg(set_id)::bigint, t.id, sqlc.arg(embedding)::vector
FROM tools t WHERE t.id = sqlc.arg(tool_id)::bigint
FOR KEY SHARE OF t
ON CONFLICT (set_id, tool_id) DO UPDATE SET embedding = excluded.embedding
WHERE tool_vectors.embedding IS DISTINCT FROM excluded.embedding;

-- name: SetBuildProgress :exec
UPDATE vector_sets SET done = LEAST(GREATEST(done, $2), total) WHERE id = $1;

-- name: FinishSet :exec
UPDATE vector_sets SET state = 'ready', done = total, finished_at = now() WHERE id = $1;

-- name: RetireSet :exec
UPDATE vector_sets SET state = 'retired', finished_at = now() WHERE id = $1;

-- name: FailSet :execrows
UPDATE vector_sets SET state = 'failed', error = $2, finished_at = now() WHERE id = $1 AND state = 'building';

-- name: BuildSetIndex :one
-- Builds the HNSW index of the set's partition in bulk (false: the space has no indexable
-- dimension; the set is searched exactly).
SELECT toolgate_index_vector_partition(sqlc.arg(set_id)::bigint)::boolean;

-- name: LockVectorSetForDrop :many
-- Waits for the enrichment transactions that listed the set as writable (they hold it FOR
-- KEY SHARE) before its partition goes away.
SELECT id FROM vector_sets WHERE id = $1 FOR UPDATE;

-- name: DropSetPartition :exec
SELECT toolgate_drop_vector_partition(sqlc.arg(set_id)::bigint);

-- name: DeleteVectorSet :exec
DELETE FROM vector_sets WHERE id = $1;

-- name: ListProfileSets :many
-- A profile's current set and any set being built, with how many vectors each holds.
SELECT vs.*, (SELECT count(*) FROM tool_vectors v WHERE v.set_id = vs.id) AS vectors
FROM vector_sets vs JOIN weight_profiles p ON p.id = vs.profile_id
WHERE vs.profile_id = $1 AND (vs.id = p.current_set OR vs.state = 'building')
ORDER BY vs.id;

-- name: ProfileSearchable :one
-- Whether the profile's current set holds vectors, or no tool has an embedded component yet
-- (an empty catalog: nothing to build).
SELECT (EXISTS (SELECT 1 FROM tool_vectors v JOIN weight_profiles p ON p.current_set = v.set_id WHERE p.id = $1)
        OR NOT EXISTS (SELECT 1 FROM tool_components WHERE embedding IS NOT NULL))::boolean;
