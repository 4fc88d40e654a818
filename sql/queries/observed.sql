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
-- Key and source limits: a search made with an API key counts only while that key is not
-- revoked and may still see the tool's source (api_keys.sources now, not when it searched);
-- a search without a key saw every source. The search itself returned the tool (a label's
-- rank says so). Searches made before the source's observed queries were last removed are
-- forgotten. Searches made with an OAuth access token do not count at all (docs/auth.md#oauth).
WITH hits AS (
    SELECT DISTINCT ON (l.id) l.id, l.created_at, l.caller_key_id AS key_id,
           (l.caller_key_id IS NULL OR k.scope = 'admin') AS trusted,
           btrim(regexp_replace(l.query, '\s+', ' ', 'g')) AS text
    FROM tools t
    JOIN sources s ON s.id = t.source_id
    JOIN search_labels x ON x.tool_name = t.name
    JOIN search_log l ON l.id = x.search_id AND l.created_at = x.search_created_at
    LEFT JOIN api_keys k ON k.id = l.caller_key_id
    LEFT JOIN observed_query_forgets f ON f.source_id = t.source_id
    WHERE t.id = sqlc.arg(tool_id)::bigint
      AND x.success IS DISTINCT FROM false
      AND (f.forgotten_at IS NULL OR l.created_at > f.forgotten_at)
      -- a search by OAuth access token (caller 'oauth:...') has no key to count or to
      -- revoke: it is left out
      AND ((l.caller_key_id IS NULL AND NOT toolgate_token_search(l.caller))
           OR (k.id IS NOT NULL AND k.revoked_at IS NULL AND (k.sources IS NULL OR s.name = ANY (k.sources))))
    ORDER BY l.id
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
-- One sweep runs at a time: the observed_queries job is unique while it waits or runs.
UPDATE observed_query_sweep
   SET sweeping_until = coalesce(sweeping_until, clock_timestamp()), updated_at = now()
RETURNING labels_until, sweeping_until::timestamptz AS sweeping_until, after_tool, min_keys;

-- name: SetObservedSweepProgress :exec
UPDATE observed_query_sweep SET after_tool = $1, updated_at = now();

-- name: FinishObservedSweep :exec
UPDATE observed_query_sweep
   SET labels_until = sweeping_until, sweeping_until = NULL, after_tool = 0,
       min_keys = sqlc.arg(min_keys)::int, updated_at = now();

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
