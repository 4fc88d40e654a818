-- Memories: the queries of labelled searches as retrieval keys of the tool the agent then
-- used, per tenant (migration 0035, internal/memory, docs/learning.md). The search statement
-- reads them (sql/queries/search.sql, CTEs mten and mem).

-- name: MemoriesWanted :many
-- The memories tool tool_id should have now, from the searches labelled with it
-- (search_labels: a call, or a feedback; not one whose call or feedback said it failed)
-- that returned it, trimmed and with runs of whitespace made one space, grouped
-- case-insensitively (norm), at most max_chars characters; a group shows its most recent
-- spelling.
--
-- Whose: a search without a key or with an admin key is the operator's (tenant '', no key);
-- a search key's is its tenant's (api_keys.tenant, else 'key:' || id), one row per key.
-- A query that min_keys distinct search keys asked becomes global too (tenant '', no key):
-- k-anonymous, it shows no one key's words and no one tenant can plant it alone.
--
-- Limits: the searches that count are toolgate_teaching_searches (keys not revoked that may
-- still see the tool's source, no OAuth token, none made before the source's observed
-- queries were removed), the observed queries' rule too; searches made before the tool's
-- memories were removed are forgotten, and so are a tenant's searches of a query made
-- before its memory of that query was removed (tool_memory_query_forgets; a removed global
-- memory: the query is global again only from searches made after). Per tenant, the most
-- recently labelled max_n.
WITH hits AS (
    SELECT h.id, h.created_at, h.labelled_at, CASE WHEN h.operator THEN NULL ELSE h.key_id END AS key_id,
           h.tenant, h.text
    FROM toolgate_teaching_searches(sqlc.arg(tool_id)::bigint) AS h (id, created_at, labelled_at, key_id, operator, tenant, text)
    LEFT JOIN tool_memory_forgets mf ON mf.tool_id = sqlc.arg(tool_id)::bigint
    WHERE mf.forgotten_at IS NULL OR h.created_at > mf.forgotten_at
), kept AS (
    SELECT h.* FROM hits h
    WHERE h.text <> '' AND char_length(h.text) <= sqlc.arg(max_chars)::int
      AND NOT EXISTS (SELECT FROM tool_memory_query_forgets q
                      WHERE q.tool_id = sqlc.arg(tool_id)::bigint AND q.tenant = h.tenant AND q.norm = lower(h.text)
                        AND h.created_at <= q.forgotten_at)
), groups AS (
    SELECT tenant, key_id, lower(text) AS norm, count(*) AS searches, max(labelled_at) AS last,
           (array_agg(text ORDER BY created_at DESC, id DESC))[1] AS text
    FROM kept
    GROUP BY tenant, key_id, lower(text)
    UNION ALL
    SELECT '', NULL, lower(h.text), count(*), max(h.labelled_at), (array_agg(h.text ORDER BY h.created_at DESC, h.id DESC))[1]
    FROM kept h
    WHERE h.key_id IS NOT NULL
      AND NOT EXISTS (SELECT FROM tool_memory_query_forgets q
                      WHERE q.tool_id = sqlc.arg(tool_id)::bigint AND q.tenant = '' AND q.norm = lower(h.text)
                        AND h.created_at <= q.forgotten_at)
    GROUP BY lower(h.text)
    HAVING count(DISTINCT key_id) >= sqlc.arg(min_keys)::int
), merged AS (
    -- an operator's query that is also k-anonymous is one global row
    SELECT tenant, key_id, norm, sum(searches)::int AS searches, max(last) AS last,
           (array_agg(text ORDER BY last DESC))[1] AS text
    FROM groups
    GROUP BY tenant, key_id, norm
)
SELECT m.tenant::text AS tenant, coalesce(m.key_id, 0)::bigint AS key_id, m.norm::text AS norm, m.text::text AS text,
       m.searches::int AS searches, m.last::timestamptz AS labelled_at
FROM (SELECT g.*, row_number() OVER (PARTITION BY g.tenant ORDER BY g.last DESC, g.norm) AS r FROM merged g) m
WHERE m.r <= sqlc.arg(max_n)::int
ORDER BY m.tenant, m.key_id NULLS FIRST, m.norm;

-- name: LockToolMemories :exec
-- Serializes the writers of one tool's memories for the rest of the transaction (key
-- locks.MemoryTool of internal/locks/locks.go).
SELECT pg_advisory_xact_lock(74204, (sqlc.arg(tool_id)::bigint % 2147483647)::int);

-- name: ListToolMemoryRows :many
-- The memories tool tool_id has, for the sweep's diff.
SELECT id, tenant, key_id, norm, query, searches, labelled_at, (embedding IS NOT NULL)::boolean AS embedded
FROM tool_memories WHERE tool_id = $1;

-- name: InsertToolMemory :exec
INSERT INTO tool_memories (tool_id, tenant, key_id, norm, query, embedding, searches, labelled_at)
VALUES (sqlc.arg(tool_id), sqlc.arg(tenant), sqlc.narg(key_id), sqlc.arg(norm), sqlc.arg(query),
        sqlc.narg(embedding)::vector, sqlc.arg(searches), sqlc.arg(labelled_at));

-- name: UpdateToolMemory :exec
-- A memory whose spelling, count or label time changed; embedding NULL keeps the stored one.
-- (The embeddings are given as vector, and stored at half precision: migration 0055.)
UPDATE tool_memories
   SET query = sqlc.arg(query), searches = sqlc.arg(searches), labelled_at = sqlc.arg(labelled_at),
       embedding = coalesce(sqlc.narg(embedding)::vector::halfvec, embedding)
WHERE id = sqlc.arg(id);

-- name: DeleteToolMemoriesByID :exec
DELETE FROM tool_memories WHERE id = ANY(sqlc.arg(ids)::bigint[]);

-- name: StartMemorySweep :one
-- The sweep to run: the one in progress (cut short, it resumes), or a new one up to now.
UPDATE memory_sweep
   SET sweeping_until = coalesce(sweeping_until, clock_timestamp()), updated_at = now()
RETURNING labels_until, sweeping_until::timestamptz AS sweeping_until, after_tool, min_keys;

-- name: SetMemorySweepProgress :exec
-- The progress of the sweep up to sweeping_until (none once another run finished it).
UPDATE memory_sweep SET after_tool = sqlc.arg(after_tool)::bigint, updated_at = now()
WHERE sweeping_until = sqlc.arg(sweeping_until)::timestamptz;

-- name: FinishMemorySweep :exec
-- Ends the sweep up to sweeping_until, unless another run that shared it ended it first.
UPDATE memory_sweep
   SET labels_until = sweeping_until, sweeping_until = NULL, after_tool = 0,
       min_keys = sqlc.arg(min_keys)::int, updated_at = now()
WHERE sweeping_until = sqlc.arg(sweeping_until)::timestamptz;

-- name: RecountMemoryTenants :exec
-- Each tenant's number of memories (tool_memory_tenants, migration 0049), which decides how
-- the search statement scans its memories (exactly, or through the HNSW index): at the end
-- of every sweep, writing only the counts that changed.
-- A tenant with no memory left loses its row and its lists' centroids.
WITH counts AS (
    SELECT m.tenant, count(*)::int AS memories FROM tool_memories m GROUP BY m.tenant
), gone AS (
    DELETE FROM tool_memory_tenants c WHERE NOT EXISTS (SELECT 1 FROM counts n WHERE n.tenant = c.tenant)
), gone_lists AS (
    DELETE FROM tool_memory_lists l WHERE NOT EXISTS (SELECT 1 FROM counts n WHERE n.tenant = l.tenant)
)
INSERT INTO tool_memory_tenants AS c (tenant, memories)
SELECT n.tenant, n.memories FROM counts n
ON CONFLICT (tenant) DO UPDATE SET memories = excluded.memories
WHERE c.memories <> excluded.memories;

-- name: ListMemoryToolsToRefresh :many
-- Up to n tools after after_tool (by id) whose memories may have changed: those with a
-- label written after since; those with memories not yet embedded (the space changed);
-- and every tool that has memories when all (the threshold changed) or when a key was
-- revoked after since (the global memories it helped make k-anonymous may go).
SELECT u.id::bigint AS id FROM (
    SELECT t.id
    FROM search_labels x JOIN tools t ON t.name = x.tool_name
    WHERE x.created_at > sqlc.arg(since)::timestamptz
    UNION
    SELECT m.tool_id FROM tool_memories m WHERE m.embedding IS NULL
    UNION
    SELECT m.tool_id
    FROM tool_memories m
    WHERE sqlc.arg(all_tools)::boolean
       OR EXISTS (SELECT 1 FROM api_keys k WHERE k.revoked_at > sqlc.arg(since)::timestamptz)
) u
WHERE u.id > sqlc.arg(after_tool)::bigint
ORDER BY u.id
LIMIT sqlc.arg(n)::int;

-- name: ListToolMemories :many
-- What a tool learned (GET /admin/tools/{name}/memories): every tenant's memories of it,
-- the most recently labelled first.
SELECT m.id, m.tenant, m.query, m.searches, m.labelled_at, k.name AS key_name
FROM tool_memories m
LEFT JOIN api_keys k ON k.id = m.key_id
WHERE m.tool_id = $1
ORDER BY m.labelled_at DESC, m.id DESC;

-- name: ForgetToolMemories :execrows
-- Removes what a tool learned: its memories and its negative evidence go, and the searches
-- until now teach it nothing again (tool_memory_forgets).
WITH mark AS (
    INSERT INTO tool_memory_forgets AS f (tool_id, forgotten_at) VALUES ($1, now())
    ON CONFLICT ON CONSTRAINT tool_memory_forgets_pkey DO UPDATE SET forgotten_at = excluded.forgotten_at
), demoted AS (
    DELETE FROM tool_demotions d WHERE d.tool_id = $1
)
DELETE FROM tool_memories m WHERE m.tool_id = $1;

-- name: ForgetToolMemory :execrows
-- Removes one memory (id) of a tool: its tenant's memories of the same query go (a tenant
-- has one per key), and the tenant's searches of that query until now teach the tool
-- nothing again (tool_memory_query_forgets). No row: the tool has no such memory.
WITH m AS (
    SELECT x.tool_id, x.tenant, x.norm FROM tool_memories x
    WHERE x.id = sqlc.arg(id)::bigint AND x.tool_id = sqlc.arg(tool_id)::bigint
), mark AS (
    INSERT INTO tool_memory_query_forgets AS f (tool_id, tenant, norm, forgotten_at)
    SELECT m.tool_id, m.tenant, m.norm, now() FROM m
    ON CONFLICT ON CONSTRAINT tool_memory_query_forgets_pkey DO UPDATE SET forgotten_at = excluded.forgotten_at
)
DELETE FROM tool_memories x USING m WHERE x.tool_id = m.tool_id AND x.tenant = m.tenant AND x.norm = m.norm;

-- name: DeleteSourceMemories :execrows
-- The memories and the negative evidence of a source's tools (its observed queries removed:
-- the same searches are forgotten, observed_query_forgets).
WITH demoted AS (
    DELETE FROM tool_demotions d USING tools t WHERE t.id = d.tool_id AND t.source_id = $1
)
DELETE FROM tool_memories m USING tools t WHERE t.id = m.tool_id AND t.source_id = $1;

-- name: MemoryTexts :many
-- For explain: one tenant's memories of the named tools nearest to a query vector, at most
-- per_tool per tool, with their similarity.
SELECT x.name::text AS name, x.query, x.sim::float8 AS sim
FROM (
    SELECT t.name, m.query, 1 - (m.embedding <=> sqlc.arg(vec)::vector::halfvec) AS sim,
           row_number() OVER (PARTITION BY m.tool_id ORDER BY m.embedding <=> sqlc.arg(vec)::vector::halfvec, m.id) AS r
    FROM tools t
    JOIN tool_memories m ON m.tool_id = t.id
    WHERE t.name = ANY(sqlc.arg(names)::text[]) AND m.tenant = sqlc.arg(tenant)::text
      AND m.embedding IS NOT NULL
) x
WHERE x.r <= sqlc.arg(per_tool)::int
ORDER BY x.name, x.sim DESC;

-- name: RefreshDemotions :exec
-- The negative evidence (tool_demotions, migration 0050), recomputed whole from the labels:
-- per tenant (as MemoriesWanted's: the operator's '' for a search without a key or with an
-- admin key, else the key's tenant; a revoked key's and an OAuth token's searches do not
-- count) and tool, the labelled searches that returned it first and labelled another tool
-- but not it (ignored), its failed labels (failed) and its other labels (used); searches
-- made before the tool's memories or its source's observed queries were removed are
-- forgotten.
WITH forgot AS (
    -- when each tool's evidence was forgotten: its memories removed, or its source's
    -- observed queries (as MemoriesWanted forgets the same searches)
    SELECT t.name, greatest(mf.forgotten_at, f.forgotten_at) AS at
    FROM tools t
    LEFT JOIN tool_memory_forgets mf ON mf.tool_id = t.id
    LEFT JOIN observed_query_forgets f ON f.source_id = t.source_id
    WHERE mf.forgotten_at IS NOT NULL OR f.forgotten_at IS NOT NULL
), s AS (
    SELECT l.id, l.created_at, l.results -> 0 ->> 'name' AS first,
           CASE WHEN l.caller_key_id IS NULL OR k.scope = 'admin' THEN '' ELSE coalesce(k.tenant, 'key:' || k.id) END AS tenant
    FROM (SELECT DISTINCT x.search_id, x.search_created_at FROM search_labels x) x
    JOIN search_log l ON l.id = x.search_id AND l.created_at = x.search_created_at
    LEFT JOIN api_keys k ON k.id = l.caller_key_id
    WHERE ((l.caller_key_id IS NULL AND NOT toolgate_token_search(l.caller))
           OR (k.id IS NOT NULL AND k.revoked_at IS NULL))
), lab AS (
    SELECT s.id, s.created_at, s.tenant, x.tool_name, bool_or(x.success = false) AS failed,
           bool_or(x.success IS DISTINCT FROM false) AS used
    FROM s
    JOIN search_labels x ON x.search_id = s.id AND x.search_created_at = s.created_at
    GROUP BY s.id, s.created_at, s.tenant, x.tool_name
), ev AS (
    SELECT s.tenant, s.first AS tool_name, 1 AS ignored, 0 AS failed, 0 AS used
    FROM s
    WHERE s.first IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM forgot g WHERE g.name = s.first AND s.created_at <= g.at)
      AND NOT EXISTS (SELECT 1 FROM lab b WHERE b.id = s.id AND b.tool_name = s.first)
      AND EXISTS (SELECT 1 FROM lab b WHERE b.id = s.id AND b.used)
    UNION ALL
    SELECT b.tenant, b.tool_name, 0, b.failed::int, (b.used AND NOT b.failed)::int FROM lab b
    WHERE NOT EXISTS (SELECT 1 FROM forgot g WHERE g.name = b.tool_name AND b.created_at <= g.at)
), sums AS (
    SELECT e.tenant, t.id AS tool_id, sum(e.ignored)::int AS ignored, sum(e.failed)::int AS failed, sum(e.used)::int AS used
    FROM ev e
    JOIN tools t ON t.name = e.tool_name
    GROUP BY e.tenant, t.id
), gone AS (
    DELETE FROM tool_demotions d
    WHERE NOT EXISTS (SELECT 1 FROM sums n WHERE n.tenant = d.tenant AND n.tool_id = d.tool_id AND (n.ignored > 0 OR n.failed > 0))
)
INSERT INTO tool_demotions AS d (tenant, tool_id, ignored, failed, used)
SELECT n.tenant, n.tool_id, n.ignored, n.failed, n.used FROM sums n
WHERE n.ignored > 0 OR n.failed > 0
ON CONFLICT (tenant, tool_id) DO UPDATE SET ignored = excluded.ignored, failed = excluded.failed, used = excluded.used
WHERE (d.ignored, d.failed, d.used) IS DISTINCT FROM (excluded.ignored, excluded.failed, excluded.used);

-- name: MemoryTenantsToList :many
-- The tenants whose lists the sweep must make, drop or complete (internal/memory, Cluster;
-- the rule: toolgate_memory_lists_action, list_from 0: never).
SELECT c.tenant FROM tool_memory_tenants c
WHERE toolgate_memory_lists_action(c.tenant, c.memories, c.lists, c.listed, sqlc.arg(list_from)::int) IS NOT NULL
ORDER BY c.tenant;

-- name: LockMemoryTenant :one
-- A tenant's count and what its lists need now (toolgate_memory_lists_action; '' nothing),
-- its row locked for the sweep's change of them.
SELECT c.memories, coalesce(toolgate_memory_lists_action(c.tenant, c.memories, c.lists, c.listed, sqlc.arg(list_from)::int), '')::text AS action
FROM tool_memory_tenants c WHERE c.tenant = sqlc.arg(tenant)::text FOR UPDATE;

-- name: TenantMemoryEmbeddings :many
-- The embeddings of a tenant's memories (unit vectors), in id order, for its lists' k-means.
SELECT embedding::vector AS embedding FROM tool_memories
WHERE tenant = $1 AND embedding IS NOT NULL ORDER BY id;

-- name: DeleteMemoryLists :exec
DELETE FROM tool_memory_lists WHERE tenant = $1;

-- name: InsertMemoryLists :exec
-- A tenant's lists: list i (from 0) around centroids[i+1].
INSERT INTO tool_memory_lists (tenant, list, centroid)
SELECT sqlc.arg(tenant)::text, (c.ord - 1)::int, l2_normalize(c.v)::halfvec
FROM unnest(sqlc.arg(centroids)::vector[]) WITH ORDINALITY AS c (v, ord);

-- name: FileMemories :exec
-- Files a tenant's embedded memories under the list of their nearest centroid (-1 when it
-- has none): all of them when all (its lists were made or dropped: nearly every memory
-- moves), else those not in a list yet. The list is computed from the row as it is
-- written, so a memory whose embedding a concurrent sweep changed is filed by its new
-- embedding.
UPDATE tool_memories m
   SET list = coalesce((SELECT l.list FROM tool_memory_lists l WHERE l.tenant = m.tenant
                        ORDER BY l.centroid <#> m.embedding LIMIT 1), -1)
WHERE m.tenant = sqlc.arg(tenant)::text AND m.embedding IS NOT NULL
  AND (sqlc.arg(all_memories)::boolean OR m.list = -1);

-- name: SetMemoryTenantLists :exec
UPDATE tool_memory_tenants SET lists = sqlc.arg(lists)::int, listed = sqlc.arg(listed)::int
WHERE tenant = sqlc.arg(tenant)::text;
