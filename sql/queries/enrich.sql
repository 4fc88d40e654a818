-- Enrichment: enrichment outputs, tool components, the embedding space, weight profiles,
-- vector sets and tool vectors.

-- name: GetEmbeddingSpace :one
SELECT * FROM embedding_space;

-- name: SetEmbeddingSpace :exec
INSERT INTO embedding_space (model, dims) VALUES ($1, $2)
ON CONFLICT (singleton) DO UPDATE SET model = excluded.model, dims = excluded.dims, updated_at = now();

-- name: GetToolByID :one
SELECT * FROM tools WHERE id = $1;

-- name: LockToolHash :one
-- Locks the tool row for the rest of the transaction and returns its current hash, so a
-- job writing outputs for a definition that changed meanwhile can tell. FOR NO KEY UPDATE,
-- not FOR UPDATE: the foreign-key checks of tool_vectors inserts (a re-weight filling its
-- set) take FOR KEY SHARE on the tool row, which FOR UPDATE would block while that insert
-- holds its index entry, a cycle with this transaction's own vector upserts.
SELECT content_hash FROM tools WHERE id = $1 FOR NO KEY UPDATE;

-- name: ListToolEnrichments :many
SELECT * FROM tool_enrichments WHERE tool_id = $1 ORDER BY step;

-- name: UpsertToolEnrichment :exec
INSERT INTO tool_enrichments (tool_id, step, content_hash, model, output, prompt_tokens, completion_tokens)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (tool_id, step) DO UPDATE
SET content_hash = excluded.content_hash, model = excluded.model, output = excluded.output,
    prompt_tokens = excluded.prompt_tokens, completion_tokens = excluded.completion_tokens,
    created_at = now();

-- name: ListToolComponents :many
SELECT * FROM tool_components WHERE tool_id = $1 ORDER BY kind, ordinal;

-- name: DeleteStaleToolComponents :exec
-- Deletes the tool's components whose key (kind, ordinal) is not one of the pairs to keep,
-- given as UpsertToolComponents takes them: kinds[i] with ordinals[i].
DELETE FROM tool_components
WHERE tool_id = sqlc.arg(tool_id)
  AND (kind, ordinal) NOT IN (SELECT unnest(sqlc.arg(kinds)::text[]), unnest(sqlc.arg(ordinals)::int[]));

-- name: UpsertToolComponents :exec
-- Writes all of a tool's components in ONE statement: the lexical index is maintained by
-- statement-level triggers (migration 0004), so one statement means one index refresh per
-- tool instead of one per component. Embeddings travel as pgvector text ('[1,2,...]').
INSERT INTO tool_components (tool_id, kind, ordinal, text, text_hash, embedding, model)
SELECT sqlc.arg(tool_id)::bigint, unnest(sqlc.arg(kinds)::text[]), unnest(sqlc.arg(ordinals)::int[]),
       unnest(sqlc.arg(texts)::text[]), unnest(sqlc.arg(text_hashes)::text[]),
       unnest(sqlc.arg(embeddings)::text[])::vector, sqlc.arg(model)::text
ON CONFLICT (tool_id, kind, ordinal) DO UPDATE
SET text = excluded.text, text_hash = excluded.text_hash, embedding = excluded.embedding,
    model = excluded.model, updated_at = now()
WHERE (tool_components.text_hash, tool_components.model, tool_components.embedding IS NULL)
      IS DISTINCT FROM (excluded.text_hash, excluded.model, excluded.embedding IS NULL);

-- name: ClearComponentEmbeddings :exec
UPDATE tool_components SET embedding = NULL, model = NULL WHERE embedding IS NOT NULL OR model IS NOT NULL;

-- name: DeleteAllToolVectors :exec
DELETE FROM tool_vectors;

-- name: CatalogHasEmbeddings :one
-- Whether any tool has an embedded component: a profile made after that is built by a
-- re-weight, not by the enrichment jobs that happen to run next.
SELECT EXISTS (SELECT 1 FROM tool_components WHERE embedding IS NOT NULL);

-- name: LockProfilesWithoutSet :many
-- Locks the profiles that have no current vector set yet; a concurrent caller waits and then
-- sees them with a set.
SELECT id FROM weight_profiles WHERE current_set IS NULL ORDER BY id FOR UPDATE;

-- name: CreateVectorSet :one
-- The set keeps the profile's weights of now (migration 0010). A ready set of a profile that
-- is not active has its HNSW index deferred (the vector_sets_defer_index trigger).
INSERT INTO vector_sets (profile_id, state, strategy, weights)
SELECT p.id, sqlc.arg(state), p.strategy, p.weights FROM weight_profiles p WHERE p.id = sqlc.arg(profile_id)
RETURNING id;

-- name: HasDeferredVectorIndex :one
-- Whether a ready set waits for its HNSW index (the vector_index job's work).
SELECT EXISTS (SELECT 1 FROM vector_sets WHERE state = 'ready' AND index_deferred)::boolean;

-- name: ListDeferredVectorIndexes :many
SELECT id FROM vector_sets WHERE state = 'ready' AND index_deferred ORDER BY id;

-- name: BuildDeferredVectorIndex :one
-- Builds the HNSW index of a ready set whose index was deferred and clears the flag, in one
-- transaction (a build cut short leaves the flag, and the next run builds it). The row lock
-- makes a concurrent caller wait, then find nothing to do; CREATE INDEX holds SHARE on the
-- set's partition only, so enrichment writes to that set wait for the build, searches do
-- not. No row: the set was not waiting (already built, retired, deleted).
UPDATE vector_sets SET index_deferred = false
WHERE id = $1 AND state = 'ready' AND index_deferred
RETURNING toolgate_index_vector_partition(id)::boolean AS indexed;

-- name: SetProfileCurrentSet :exec
UPDATE weight_profiles SET current_set = $2, updated_at = now() WHERE id = $1;

-- name: ListWritableVectorSets :many
-- The vector sets a freshly embedded tool must be written to, with their profile and the
-- weights each set was built with (not the profile's current ones: a weight change takes
-- effect with the next re-weight). FOR KEY SHARE keeps a set's partition from being dropped
-- (a retired or failed set) until this transaction has written to it.
SELECT vs.id AS set_id, p.name AS profile, vs.strategy, vs.weights
FROM vector_sets vs JOIN weight_profiles p ON p.id = vs.profile_id
WHERE vs.state IN ('ready', 'building')
ORDER BY vs.id
FOR KEY SHARE OF vs;

-- name: UpsertToolVector :batchexec
INSERT INTO tool_vectors (set_id, tool_id, embedding) VALUES ($1, $2, $3)
ON CONFLICT (set_id, tool_id) DO UPDATE SET embedding = excluded.embedding
-- an unchanged vector is not rewritten: every new row version is another HNSW insert
WHERE tool_vectors.embedding IS DISTINCT FROM excluded.embedding;

-- name: ListToolIDsAndHashes :many
SELECT id, content_hash FROM tools ORDER BY id;

-- name: ListToolHashesByID :many
SELECT id, content_hash FROM tools WHERE id = ANY(sqlc.arg(ids)::bigint[]) ORDER BY id;

-- name: ListToolComponentViews :many
-- A tool's components without their vectors, for display.
SELECT kind, ordinal, text, model, (embedding IS NOT NULL)::boolean AS has_embedding, updated_at
FROM tool_components WHERE tool_id = $1
ORDER BY array_position(ARRAY['name', 'description', 'parameters', 'question', 'topics', 'profile_function',
    'profile_tags', 'profile_when_to_use', 'profile_limitation', 'profile_example_usage', 'observed', 'concat'], kind), ordinal;

-- name: ToolHasActiveVector :one
SELECT EXISTS (SELECT 1 FROM tool_vectors v JOIN weight_profiles p ON p.current_set = v.set_id
               WHERE p.is_active AND v.tool_id = $1)::boolean;

-- name: ShareEmbeddingSpace :one
-- Reads the embedding space and keeps it from changing until the transaction ends, so
-- vectors written in it cannot outlive a concurrent reembed.
SELECT model, dims FROM embedding_space FOR SHARE;
