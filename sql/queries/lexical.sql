-- The lexical index's writer (internal/lexical; sql/functions/lexical.sql).

-- name: LexicalAsyncCommit :exec
-- An indexer transaction commits its queue deletions and the index rows they became
-- together: a crash that loses the commit loses both, so it need not wait for the WAL flush.
SELECT set_config('synchronous_commit', 'off', true);

-- name: LexicalIndexBatch :one
-- Takes the writer lock, claims up to max_tools queued tools and recomputes their index rows;
-- returns their ids (empty: the queue is empty).
SELECT toolgate_search_index(sqlc.arg(max_tools)::int)::bigint[];

-- name: LexicalMeaningTexts :many
-- The text whose meaning is stored for each of the given tools that still exist: name,
-- title and description, one a line (a Title Case title is no sentence of the description:
-- meaning.Names).
SELECT id, concat_ws(E'\n', name, title, description)::text AS text
FROM tools WHERE id = ANY (sqlc.arg(ids)::bigint[]);

-- name: LexicalWriteMeanings :exec
-- Stores the meanings of tools (replacing what they had).
INSERT INTO tool_meanings (tool_id, meaning)
SELECT unnest(sqlc.arg(ids)::bigint[]), unnest(sqlc.arg(meanings)::sparsevec[])
ON CONFLICT (tool_id) DO UPDATE SET meaning = EXCLUDED.meaning;

-- name: LexicalDeleteMeanings :exec
-- Removes the stored meanings of tools that are gone or whose text has none (no word with a
-- sense).
DELETE FROM tool_meanings WHERE tool_id = ANY (sqlc.arg(ids)::bigint[]);

-- name: LexicalQueueLast :one
-- The id of the last queued change (0: the queue is empty): a flush indexes through it.
SELECT coalesce(max(id), 0)::bigint FROM search_queue;

-- name: LexicalQueuedThrough :one
-- Whether a change queued at or before id still waits.
SELECT EXISTS (SELECT 1 FROM search_queue WHERE id <= sqlc.arg(id)::bigint);

-- name: LexicalCorpus :one
SELECT docs, total_len, impact_avgdl FROM search_corpus;

-- name: LexicalReimpact :one
-- Recomputes the impacts of the postings of up to n tools after after_id with avgdl; returns
-- the last tool id done, 0 when none was left.
SELECT coalesce(toolgate_search_reimpact(sqlc.arg(after_id)::bigint, sqlc.arg(n)::int, sqlc.arg(avgdl)::float8), 0)::bigint;

-- name: LexicalSetImpactAvgdl :exec
UPDATE search_corpus SET impact_avgdl = sqlc.arg(avgdl)::float8;

-- name: LexicalClaimReimpact :one
-- Claims the recompute's lease for holder for lease_seconds when no other holder's lease is
-- running; false when one is (that flush recomputes).
WITH claimed AS (
    UPDATE search_reimpact_lease
    SET holder = sqlc.arg(holder)::text, until = now() + sqlc.arg(lease_seconds)::float8 * interval '1 second'
    WHERE until < now()
    RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM claimed);

-- name: LexicalRenewReimpact :one
-- Extends holder's lease to lease_seconds from now; false when holder no longer holds it
-- (its lease expired and another flush took it).
WITH renewed AS (
    UPDATE search_reimpact_lease
    SET until = now() + sqlc.arg(lease_seconds)::float8 * interval '1 second'
    WHERE holder = sqlc.arg(holder)::text AND until >= now()
    RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM renewed);

-- name: LexicalReleaseReimpact :exec
UPDATE search_reimpact_lease SET until = '-infinity' WHERE holder = sqlc.arg(holder)::text;
