-- Who made a search, as the search log records it: the rules every query that counts, caps
-- or learns from searches by their caller shares.
--
-- Applied after the migrations by internal/postgres.MigrateUp, whole, whenever its content
-- changed or a migration ran: every statement here must be re-runnable (CREATE OR REPLACE).
-- Files apply in name order: this one comes before the files that use it.

-- Whether a search was made with an OAuth access token (its caller is auth.OAuthName's
-- 'oauth:<issuer>#<subject>'): such a search has no key to count toward a threshold, cap or
-- revoke, and is not the operator's keyless search, so it teaches nothing — no observed
-- query, no memory, no tune (docs/auth.md#oauth) — and an A/B experiment caps it per subject
-- as it caps a search key (experiments.sql).
CREATE OR REPLACE FUNCTION toolgate_token_search(caller text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(caller, '') LIKE 'oauth:%'
$$;

-- The searches that may teach tool what it is for (observed queries, memories): the searches
-- labelled with it (search_labels: a call or a feedback; not one whose call or feedback said
-- it failed), one row per search with its latest such label, made after the tool's source's
-- observed queries were last removed. A search made with a key counts only while the key is
-- not revoked and may still see the tool's source (api_keys.sources now, not when it
-- searched); a search without a key saw every source; a search made with an OAuth access
-- token never counts (toolgate_token_search). Columns: the search, when it was made and
-- labelled, its key (NULL: none), whether it is the operator's (no key, or an admin key),
-- its tenant ('' for the operator's, else the key's tenant or 'key:' || id), and its query
-- trimmed with runs of whitespace made one space.
CREATE OR REPLACE FUNCTION toolgate_teaching_searches(tool bigint)
RETURNS TABLE (id bigint, created_at timestamptz, labelled_at timestamptz, key_id bigint,
               operator boolean, tenant text, text text)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT DISTINCT ON (l.id) l.id, l.created_at, x.created_at, l.caller_key_id,
           l.caller_key_id IS NULL OR k.scope = 'admin',
           CASE WHEN l.caller_key_id IS NULL OR k.scope = 'admin' THEN '' ELSE coalesce(k.tenant, 'key:' || k.id) END,
           btrim(regexp_replace(l.query, '\s+', ' ', 'g'))
    FROM tools t
    JOIN sources s ON s.id = t.source_id
    JOIN search_labels x ON x.tool_name = t.name
    JOIN search_log l ON l.id = x.search_id AND l.created_at = x.search_created_at
    LEFT JOIN api_keys k ON k.id = l.caller_key_id
    LEFT JOIN observed_query_forgets f ON f.source_id = t.source_id
    WHERE t.id = tool
      AND x.success IS DISTINCT FROM false
      AND (f.forgotten_at IS NULL OR l.created_at > f.forgotten_at)
      AND ((l.caller_key_id IS NULL AND NOT toolgate_token_search(l.caller))
           OR (k.id IS NOT NULL AND k.revoked_at IS NULL AND (k.sources IS NULL OR s.name = ANY (k.sources))))
    ORDER BY l.id, x.created_at DESC
$$;
