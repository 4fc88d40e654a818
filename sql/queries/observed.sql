-- Observed queries: the queries of labelled searches as `observed` components of the tool
-- the agent then used (migration 0017, internal/observed, docs/enrichment.md#observed-queries).

-- name: ObservedQueries :many
-- The tool's observed queries as they should be now: the queries of the searches labelled
-- with the tool (search_labels, a call or a feedback; not those whose call failed or whose
-- feedback said it failed), trimmed and with runs of whitespace made one space, grouped
-- case-insensitively, at most max_chars characters, none equal (the same way) to one of the
-- tool's synthetic questions. A group shows its most recent spelling.
--
-- Trust: a group is kept only when min_keys distinct API keys searched it, or when a
-- trusted caller did: a search without a key (open mode, the internal caller, a local stdio
-- gateway: the operator's own) or with an admin key (which can change the catalog anyway).
-- So no single key plants a query in a tool everyone searches, nor shows another key's
-- query to anyone. The most asked first: each key counts once however often it searched,
-- each search without a key counts (the operator's volume is its own); ties the most
-- recently searched first; at most max_n.
--
-- Which searches count (keys, sources, removals, OAuth tokens): toolgate_teaching_searches,
-- the memories' rule too. The search itself returned the tool (a label's rank says so).
WITH hits AS (
    SELECT h.id, h.created_at, h.key_id, h.operator AS trusted, h.text
    FROM toolgate_teaching_searches(sqlc.arg(tool_id)::bigint) AS h (id, created_at, labelled_at, key_id, operator, tenant, text)
), groups AS (
    SELECT lower(text) AS norm,
           count(DISTINCT key_id) + count(*) FILTER (WHERE key_id IS NULL) AS callers,
           max(created_at) AS last,
           (array_agg(text ORDER BY created_at DESC, id DESC))[1] AS text
    FROM hits
    WHERE text <> '' AND char_length(text) <= sqlc.arg(max_chars)::int
    GROUP BY lower(text)
    HAVING bool_or(trusted) OR count(DISTINCT key_id) >= sqlc.arg(min_keys)::int
)
SELECT g.text::text AS text, g.callers::bigint AS callers
FROM groups g
WHERE NOT EXISTS (
    SELECT 1 FROM tool_components c
    WHERE c.tool_id = sqlc.arg(tool_id)::bigint AND c.kind = 'question'
      AND lower(btrim(regexp_replace(c.text, '\s+', ' ', 'g'))) = g.norm)
ORDER BY g.callers DESC, g.last DESC, g.norm
LIMIT sqlc.arg(max_n)::int;

-- name: StartObservedSweep :one
-- The sweep to run: the one in progress (cut short, it resumes), or a new one up to now;
-- min_keys is the threshold the last finished sweep applied (NULL: none yet).
-- The observed_queries job is unique while it waits or runs; two runs at once (another
-- process's) share the sweep, and the first to finish ends it.
UPDATE observed_query_sweep
   SET sweeping_until = coalesce(sweeping_until, clock_timestamp()), updated_at = now()
RETURNING labels_until, sweeping_until::timestamptz AS sweeping_until, after_tool, min_keys;

-- name: SetObservedSweepProgress :exec
-- The progress of the sweep up to sweeping_until (none once another run finished it).
UPDATE observed_query_sweep SET after_tool = sqlc.arg(after_tool)::bigint, updated_at = now()
WHERE sweeping_until = sqlc.arg(sweeping_until)::timestamptz;

-- name: FinishObservedSweep :exec
-- Ends the sweep up to sweeping_until, unless another run that shared it ended it first.
UPDATE observed_query_sweep
   SET labels_until = sweeping_until, sweeping_until = NULL, after_tool = 0,
       min_keys = sqlc.arg(min_keys)::int, updated_at = now()
WHERE sweeping_until = sqlc.arg(sweeping_until)::timestamptz;

-- name: ListToolsToRefresh :many
-- Up to n tools after after_tool (by id) whose observed queries may have changed: those
-- with a label written after since; and every tool that has observed queries when
-- all_observed (the threshold changed) or when a key was revoked after since (its searches
-- stop counting, and no label says which tools they fed: revocations are rare, and a
-- refresh that changes nothing embeds and writes nothing).
SELECT u.id::bigint AS id FROM (
    SELECT t.id
    FROM search_labels x JOIN tools t ON t.name = x.tool_name
    WHERE x.created_at > sqlc.arg(since)::timestamptz
    UNION
    SELECT c.tool_id
    FROM tool_components c
    WHERE c.kind = 'observed'
      AND (sqlc.arg(all_observed)::boolean
           OR EXISTS (SELECT 1 FROM api_keys k WHERE k.revoked_at > sqlc.arg(since)::timestamptz))
) u
WHERE u.id > sqlc.arg(after_tool)::bigint
ORDER BY u.id
LIMIT sqlc.arg(n)::int;

-- name: ListSourceToolsWithObserved :many
-- The tools of a source that have observed components.
SELECT DISTINCT c.tool_id
FROM tool_components c JOIN tools t ON t.id = c.tool_id
WHERE t.source_id = $1 AND c.kind = 'observed'
ORDER BY c.tool_id;

-- name: ListToolComponentsOfKind :many
SELECT * FROM tool_components WHERE tool_id = $1 AND kind = $2 ORDER BY ordinal;

-- name: DeleteToolComponentsFrom :exec
-- Deletes the tool's components of a kind from an ordinal on (those a shorter list left).
DELETE FROM tool_components WHERE tool_id = $1 AND kind = $2 AND ordinal >= sqlc.arg(from_ordinal)::int;

-- name: ForgetSourceObserved :exec
-- The source's searches until now no longer feed its tools' observed queries.
INSERT INTO observed_query_forgets (source_id, forgotten_at) VALUES ($1, now())
ON CONFLICT (source_id) DO UPDATE SET forgotten_at = excluded.forgotten_at;
