-- Search analytics over the retrieval log (docs/analytics.md): the rules, the definitions the
-- rollups are computed with, and the functions and views that psql users and
-- /admin/analytics/* read. Each answer has one definition here: a view is its function over
-- the whole retained log, an endpoint the same function over its window.
--
-- Applied after the migrations by internal/postgres.MigrateUp, whole, whenever its content
-- changed or a migration ran: every statement here must be re-runnable (CREATE OR REPLACE).
-- Migration 0004 made the first copy of the views, 0014 search_label_stats and the labels'
-- partition drop, 0020 the endpoint column and the rollup tables; this file is their live
-- definition. CREATE OR REPLACE VIEW keeps a view's columns: a new column goes last, and
-- removing or retyping one needs a DROP VIEW here first (which a user's view built on it
-- would refuse), so the psql views only ever gain columns.
--
-- Days, hours and months are UTC, whatever the session's time zone.
--
-- How the answers stay fast on a big log: the search_rollup job (internal/analytics) rolls
-- whole hours up into search_rollup_* once they are two minutes past, and recomputes an
-- hour whose searches got new labels. Every answer reads the rollups before
-- search_rollup_state.through and the log itself from there on (at most an hour and a few
-- minutes of searches), so it is exact whether the job ran or not, only faster when it did;
-- the one lag is that labels given to searches of a rolled-up hour count once the job ran
-- again (it runs every five minutes). The rollups are computed by the *_of functions below,
-- which the live part uses too; when any rule or *_of function changes, the rollups no
-- longer match its digest and are ignored until the job has rebuilt them.

-- ---------------------------------------------------------------------------------------
-- Upgrades that CREATE OR REPLACE cannot make: the per-hour rows gained the low_confidence
-- and memory_helped counts (migration 0048), which changes the columns of the functions that return them and of
-- search_traffic over them. Done once, on the first run after the upgrade.
DO $$
DECLARE
    hourly regprocedure := to_regprocedure('toolgate_search_hourly_of(timestamptz, timestamptz)');
BEGIN
    IF hourly IS NOT NULL AND pg_get_function_result(hourly) NOT LIKE '%memory_helped%' THEN
        DROP VIEW IF EXISTS search_traffic;
        DROP FUNCTION IF EXISTS toolgate_analytics_searches(timestamptz, text);
        DROP FUNCTION IF EXISTS toolgate_search_hourly(timestamptz);
        DROP FUNCTION toolgate_search_hourly_of(timestamptz, timestamptz);
    END IF;
END $$;

-- The learning answer gained its tenant argument (migration 0054): the one-argument answer
-- and the psql view over it go, the view is made again below. Done once.
DO $$
BEGIN
    IF to_regprocedure('toolgate_analytics_learning(timestamptz)') IS NOT NULL THEN
        DROP VIEW IF EXISTS search_learning_daily;
        DROP FUNCTION toolgate_analytics_learning(timestamptz);
    END IF;
END $$;

-- ---------------------------------------------------------------------------------------
-- Rules.

-- Where a search came from: 'rest' (POST /search), 'find_tools' (the MCP meta-tool) or
-- 'internal'. Logged since migration 0020; for an older row (NULL) what can be known: a
-- search without a session id was a POST /search, or internal code (caller 'internal',
-- no key); one with a session id is 'unknown', since find_tools always logs its session
-- but a POST /search may pass a session_id as well.
CREATE OR REPLACE FUNCTION toolgate_search_endpoint(endpoint text, session_id text, caller text, caller_key_id bigint)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(endpoint,
                    CASE WHEN session_id IS NOT NULL THEN 'unknown'
                         WHEN caller_key_id IS NULL AND caller = 'internal' THEN 'internal'
                         ELSE 'rest' END)
$$;

-- The weight profile that served a search: logged since migration 0020 (the requested one,
-- the experiment arm's, or the one active at the time); an older row served by the active
-- profile has NULL, shown as '(active)'.
CREATE OR REPLACE FUNCTION toolgate_search_profile(profile text)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(profile, '(active)')
$$;

-- A search whose best result is weak (docs/analytics.md#low-score-searches): it returned
-- something, the top result is not an exact name match, and
--   its answer had no good match (search_log.no_good_match: the confidence the API returned
--     was below search.ConfidenceThreshold; logged since migration 0048), or
--   hybrid, when the vector branch ranked anything: neither branch ranked the top result
--     first (a branch that did not rank it at all counts as not first), or the lexical
--     branch matched no tool at all;
--   lexical, or hybrid without vectors (no embedder, or it failed): its BM25 is below 1;
--   vector: never by ranks (a cosine similarity has no scale that holds across embedders).
-- Ranks, not fused scores: with min-max fusion (the default) the top result's fused score
-- is close to the sum of the weights whatever the query, and ranks mean the same under
-- every fusion. On the evaluation sets the hybrid rule flags about a tenth of the searches,
-- and more than four in five of those have a wrong first result. The confidence catches
-- what ranks cannot: a first result that one branch ranked first on a weak match (a single
-- common word, an expansion-only match).
CREATE OR REPLACE FUNCTION toolgate_search_low_score(mode text, result_count integer, results jsonb,
                                                     no_good_match boolean)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT result_count > 0
       AND NOT coalesce((results -> 0 ->> 'name_match')::boolean, false)
       AND (coalesce(no_good_match, false)
            OR CASE
                   WHEN mode = 'vector' THEN false
                   WHEN mode = 'hybrid' AND results @? '$[*].vector_rank ? (@.type() == "number")' THEN
                       (coalesce((results -> 0 ->> 'lexical_rank')::int, 0) <> 1
                        AND coalesce((results -> 0 ->> 'vector_rank')::int, 0) <> 1)
                       OR NOT results @? '$[*].lexical_rank ? (@.type() == "number")'
                   ELSE coalesce((results -> 0 ->> 'bm25')::float8, 0) < 1
               END)
$$;

-- A search of low confidence: it returned tools, but its answer had no good match
-- (search_log.no_good_match; NULL, not known, before migration 0048).
CREATE OR REPLACE FUNCTION toolgate_search_low_confidence(result_count integer, no_good_match boolean)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT result_count > 0 AND coalesce(no_good_match, false)
$$;

-- A search a memory helped: a result the memory branch scored (memory_share in the logged
-- results, search.logJSON).
CREATE OR REPLACE FUNCTION toolgate_search_memory_helped(results jsonb)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT results @? '$[*].memory_share ? (@ > 0)'
$$;

-- The start of the window of the last `days` UTC days, today included.
CREATE OR REPLACE FUNCTION toolgate_analytics_since(days integer)
RETURNS timestamptz LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT date_trunc('day', now(), 'UTC') - (days - 1) * interval '1 day'
$$;

-- ---------------------------------------------------------------------------------------
-- What the rollups hold, for the searches created in [from_ts, to_ts). The job stores their
-- rows; the answers compute them live from search_rollup_state.through on.

-- The rank of the best-ranked label (of either source) of each labelled search created in
-- [from_ts, to_ts).
CREATE OR REPLACE FUNCTION toolgate_search_best_labels(from_ts timestamptz, to_ts timestamptz)
RETURNS TABLE (search_id bigint, search_created_at timestamptz, best integer)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT x.search_id, x.search_created_at, min(x.rank)
    FROM search_labels x
    WHERE x.search_created_at >= from_ts AND x.search_created_at < to_ts
    GROUP BY x.search_id, x.search_created_at
$$;

-- Per hour, endpoint, serving profile and mode: searches, zero-result and low-score ones,
-- labelled ones (a label of either source) and, over those, the sum of 1 / the rank of the
-- best-ranked label, the low-confidence ones, and those with a result the memory branch
-- scored (memory_share in the logged results).
CREATE OR REPLACE FUNCTION toolgate_search_hourly_of(from_ts timestamptz, to_ts timestamptz)
RETURNS TABLE (hour timestamptz, endpoint text, profile text, mode text, searches bigint, zero_result bigint,
               low_score bigint, labelled bigint, rr_sum double precision, low_confidence bigint,
               memory_helped bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT date_trunc('hour', l.created_at, 'UTC'),
           toolgate_search_endpoint(l.endpoint, l.session_id, l.caller, l.caller_key_id),
           toolgate_search_profile(l.profile), l.mode,
           count(*), count(*) FILTER (WHERE l.result_count = 0),
           count(*) FILTER (WHERE toolgate_search_low_score(l.mode, l.result_count, l.results, l.no_good_match)),
           count(b.best), coalesce(sum(1.0::float8 / b.best), 0),
           count(*) FILTER (WHERE toolgate_search_low_confidence(l.result_count, l.no_good_match)),
           count(*) FILTER (WHERE toolgate_search_memory_helped(l.results))
    FROM search_log l
    LEFT JOIN toolgate_search_best_labels(from_ts, to_ts) b ON b.search_id = l.id AND b.search_created_at = l.created_at
    WHERE l.created_at >= from_ts AND l.created_at < to_ts
    GROUP BY 1, 2, 3, 4
$$;

-- Per hour and tenant whose memories the searches read (search_log.tenant, logged since
-- migration 0054; an older row has none and is not counted): searches, those a memory
-- helped, labelled ones (a label of either source) and of those the ones whose best label
-- was ranked first and in the top 5.
CREATE OR REPLACE FUNCTION toolgate_search_tenants_of(from_ts timestamptz, to_ts timestamptz)
RETURNS TABLE (hour timestamptz, tenant text, searches bigint, memory_helped bigint, labelled bigint,
               hit_1 bigint, hit_5 bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT date_trunc('hour', l.created_at, 'UTC'), l.tenant, count(*),
           count(*) FILTER (WHERE toolgate_search_memory_helped(l.results)),
           count(b.best), count(*) FILTER (WHERE b.best = 1), count(*) FILTER (WHERE b.best <= 5)
    FROM search_log l
    LEFT JOIN toolgate_search_best_labels(from_ts, to_ts) b ON b.search_id = l.id AND b.search_created_at = l.created_at
    WHERE l.created_at >= from_ts AND l.created_at < to_ts AND l.tenant IS NOT NULL
    GROUP BY 1, 2
$$;

-- Per day and query: searches, those that found nothing, when last seen.
CREATE OR REPLACE FUNCTION toolgate_search_queries_of(from_ts timestamptz, to_ts timestamptz)
RETURNS TABLE (day date, query text, searches bigint, zero_result bigint, last_seen timestamptz)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT (l.created_at AT TIME ZONE 'UTC')::date, l.query, count(*), count(*) FILTER (WHERE l.result_count = 0),
           max(l.created_at)
    FROM search_log l
    WHERE l.created_at >= from_ts AND l.created_at < to_ts
    GROUP BY 1, 2
$$;

-- The searches that found nothing, per day, query, endpoint and filters (without the null
-- ones: {} when none): how many, when last.
CREATE OR REPLACE FUNCTION toolgate_search_zero_of(from_ts timestamptz, to_ts timestamptz)
RETURNS TABLE (day date, query text, endpoint text, filters jsonb, searches bigint, last_seen timestamptz)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT (l.created_at AT TIME ZONE 'UTC')::date, l.query,
           toolgate_search_endpoint(l.endpoint, l.session_id, l.caller, l.caller_key_id),
           jsonb_strip_nulls(l.filters), count(*), max(l.created_at)
    FROM search_log l
    WHERE l.created_at >= from_ts AND l.created_at < to_ts AND l.result_count = 0
    GROUP BY 1, 2, 3, 4
$$;

-- The low-score searches, per day, query, endpoint, mode and filters: how many, the least
-- fused score and BM25 of their top results, when last.
CREATE OR REPLACE FUNCTION toolgate_search_low_of(from_ts timestamptz, to_ts timestamptz)
RETURNS TABLE (day date, query text, endpoint text, mode text, filters jsonb, searches bigint,
               top_score double precision, top_bm25 double precision, last_seen timestamptz)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT (l.created_at AT TIME ZONE 'UTC')::date, l.query,
           toolgate_search_endpoint(l.endpoint, l.session_id, l.caller, l.caller_key_id), l.mode,
           jsonb_strip_nulls(l.filters), count(*), min(l.top_score),
           min(coalesce((l.results -> 0 ->> 'bm25')::float8, 0)), max(l.created_at)
    FROM search_log l
    WHERE l.created_at >= from_ts AND l.created_at < to_ts
      AND toolgate_search_low_score(l.mode, l.result_count, l.results, l.no_good_match)
    GROUP BY 1, 2, 3, 4, 5
$$;

-- Per month and tool: how often searches returned it, and returned it first.
CREATE OR REPLACE FUNCTION toolgate_search_tools_of(from_ts timestamptz, to_ts timestamptz)
RETURNS TABLE (month date, tool_name text, returned bigint, returned_first bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT date_trunc('month', l.created_at AT TIME ZONE 'UTC')::date, r.value ->> 'name',
           count(*), count(*) FILTER (WHERE r.pos = 1)
    FROM search_log l
    CROSS JOIN LATERAL jsonb_array_elements(l.results) WITH ORDINALITY AS r (value, pos)
    WHERE l.created_at >= from_ts AND l.created_at < to_ts
    GROUP BY 1, 2
$$;

-- Per tool, how often an agent chose it after a search (a label of either source; a tool
-- both called and reported after one search counts once: a search id is unique) and how
-- often that worked (any of those labels says so). Read from the labels themselves (a
-- tenth of the searches, at most), so they count at once.
CREATE OR REPLACE FUNCTION toolgate_search_tool_labels()
RETURNS TABLE (tool_name text, called bigint, succeeded bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT x.tool_name, count(DISTINCT x.search_id), count(DISTINCT x.search_id) FILTER (WHERE x.success)
    FROM search_labels x
    GROUP BY 1
$$;

-- Per day, its n slowest searches.
CREATE OR REPLACE FUNCTION toolgate_search_slowest_of(from_ts timestamptz, to_ts timestamptz, n integer)
RETURNS TABLE (day date, search_id bigint, created_at timestamptz, latency_ms double precision)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT s.day, s.id, s.created_at, s.latency_ms
    FROM (
        SELECT (l.created_at AT TIME ZONE 'UTC')::date AS day, l.id, l.created_at, l.latency_ms,
               row_number() OVER (PARTITION BY (l.created_at AT TIME ZONE 'UTC')::date
                                  ORDER BY l.latency_ms DESC, l.id) AS r
        FROM search_log l
        WHERE l.created_at >= from_ts AND l.created_at < to_ts AND l.latency_ms IS NOT NULL
    ) s
    WHERE s.r <= n
$$;

-- The latency histogram's bucket of a search that took ms milliseconds: 0 below 1 ms, then
-- bucket i from 2^((i-1)/4) to 2^(i/4) ms (each 19% wider than the last), up to bucket 64
-- from 55 s on. A percentile read from the buckets (toolgate_analytics_latency) is within
-- 19% of the exact one.
CREATE OR REPLACE FUNCTION toolgate_latency_bucket(ms double precision)
RETURNS smallint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN ms < 1 THEN 0 ELSE least(64, 1 + floor(4 * log(2, ms::numeric)))::smallint END
$$;

-- Per hour, endpoint and latency bucket: searches.
CREATE OR REPLACE FUNCTION toolgate_search_latency_of(from_ts timestamptz, to_ts timestamptz)
RETURNS TABLE (hour timestamptz, endpoint text, bucket smallint, searches bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT date_trunc('hour', l.created_at, 'UTC'),
           toolgate_search_endpoint(l.endpoint, l.session_id, l.caller, l.caller_key_id),
           toolgate_latency_bucket(l.latency_ms), count(*)
    FROM search_log l
    WHERE l.created_at >= from_ts AND l.created_at < to_ts AND l.latency_ms IS NOT NULL
    GROUP BY 1, 2, 3
$$;

-- The digest of the rules and of the *_of functions: the rollups are valid only for the
-- definitions they were computed with.
CREATE OR REPLACE FUNCTION toolgate_search_rollup_rules()
RETURNS text LANGUAGE sql STABLE AS $$
    SELECT md5(string_agg(pg_get_functiondef(p.oid), E'\n' ORDER BY p.proname))
    FROM pg_proc p
    WHERE p.pronamespace = to_regnamespace(current_schema())
      AND p.proname IN ('toolgate_search_endpoint', 'toolgate_search_profile', 'toolgate_search_low_score',
                        'toolgate_search_low_confidence', 'toolgate_search_memory_helped',
                        'toolgate_search_best_labels', 'toolgate_search_hourly_of', 'toolgate_search_tenants_of', 'toolgate_search_queries_of', 'toolgate_search_zero_of',
                        'toolgate_search_low_of', 'toolgate_search_tools_of',
                        'toolgate_search_slowest_of', 'toolgate_latency_bucket', 'toolgate_search_latency_of')
$$;

-- Where the rollups end and the log is read: search_rollup_state.through, or -infinity
-- (everything from the log) before the first rollup and after a change of the definitions
-- (the end of this file clears `through` then). A function, not a subquery, in the
-- conditions on search_log: the planner evaluates it to estimate how many rows of the log
-- an answer reads (a few, or all of them before the first rollup).
CREATE OR REPLACE FUNCTION toolgate_search_rollup_through()
RETURNS timestamptz LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT coalesce((SELECT s.through FROM search_rollup_state s), '-infinity')
$$;

-- ---------------------------------------------------------------------------------------
-- The rollups and the rest of the log, from `since` on (whole hours and days of the
-- rollups: the windows start at midnight UTC). A day's rows may come in two parts, one
-- rolled up and one from the log: the answers below sum them. The rollups are read only
-- while search_rollup_state.through is set (a subquery, evaluated once).

CREATE OR REPLACE FUNCTION toolgate_search_hourly(since timestamptz)
RETURNS TABLE (hour timestamptz, endpoint text, profile text, mode text, searches bigint, zero_result bigint,
               low_score bigint, labelled bigint, rr_sum double precision, low_confidence bigint,
               memory_helped bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT r.hour, r.endpoint, r.profile, r.mode, r.searches, r.zero_result, r.low_score, r.labelled, r.rr_sum,
           r.low_confidence, r.memory_helped
    FROM search_rollup_hourly r
    WHERE r.hour >= since AND r.hour < (SELECT coalesce(s.through, '-infinity') FROM search_rollup_state s)
    UNION ALL
    SELECT h.* FROM toolgate_search_hourly_of(greatest(since, toolgate_search_rollup_through()), 'infinity') h
$$;

-- The tenants' rows from `since` on: of one tenant (want), or of every tenant (want NULL).
CREATE OR REPLACE FUNCTION toolgate_search_tenants(since timestamptz, want text)
RETURNS TABLE (hour timestamptz, tenant text, searches bigint, memory_helped bigint, labelled bigint,
               hit_1 bigint, hit_5 bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT r.hour, r.tenant, r.searches, r.memory_helped, r.labelled, r.hit_1, r.hit_5
    FROM search_rollup_tenants r
    WHERE (want IS NULL OR r.tenant = want)
      AND r.hour >= since AND r.hour < (SELECT coalesce(s.through, '-infinity') FROM search_rollup_state s)
    UNION ALL
    SELECT t.* FROM toolgate_search_tenants_of(greatest(since, toolgate_search_rollup_through()), 'infinity') t
    WHERE want IS NULL OR t.tenant = want
$$;

CREATE OR REPLACE FUNCTION toolgate_search_latency(since timestamptz)
RETURNS TABLE (hour timestamptz, endpoint text, bucket smallint, searches bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT r.hour, r.endpoint, r.bucket, r.searches
    FROM search_rollup_latency r
    WHERE r.hour >= since AND r.hour < (SELECT coalesce(s.through, '-infinity') FROM search_rollup_state s)
    UNION ALL
    SELECT h.* FROM toolgate_search_latency_of(greatest(since, toolgate_search_rollup_through()), 'infinity') h
$$;

-- ---------------------------------------------------------------------------------------
-- The answers: GET /admin/analytics/* and the views below.

-- Searches per bucket ('hour' or 'day') and endpoint: all, zero-result, labelled, low-score
-- and low-confidence.
CREATE OR REPLACE FUNCTION toolgate_analytics_searches(since timestamptz, bucket text)
RETURNS TABLE (start timestamptz, endpoint text, searches bigint, zero_result bigint, labelled bigint,
               low_score bigint, low_confidence bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT date_trunc(bucket, h.hour, 'UTC'), h.endpoint,
           sum(h.searches)::bigint, sum(h.zero_result)::bigint, sum(h.labelled)::bigint,
           sum(h.low_score)::bigint, sum(h.low_confidence)::bigint
    FROM toolgate_search_hourly(since) h
    GROUP BY 1, 2
$$;

-- Per bucket ('hour' or 'day'): searches and the 50th, 95th and 99th percentile of their
-- latency in milliseconds, read from the latency histogram (linear within the bucket the
-- percentile falls in; the last bucket gives its lower bound), of one endpoint or of all
-- (endpoint NULL).
CREATE OR REPLACE FUNCTION toolgate_analytics_latency(since timestamptz, bucket text, endpoint text)
RETURNS TABLE (start timestamptz, searches bigint, p50_ms double precision, p95_ms double precision,
               p99_ms double precision)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    WITH b AS (
        SELECT date_trunc(toolgate_analytics_latency.bucket, l.hour, 'UTC') AS start, l.bucket AS b,
               sum(l.searches)::bigint AS n
        FROM toolgate_search_latency(since) l
        WHERE toolgate_analytics_latency.endpoint IS NULL OR l.endpoint = toolgate_analytics_latency.endpoint
        GROUP BY 1, 2
    ), c AS (
        SELECT b.start, b.b, b.n,
               sum(b.n) OVER (PARTITION BY b.start ORDER BY b.b) - b.n AS below,
               sum(b.n) OVER (PARTITION BY b.start) AS total,
               CASE WHEN b.b = 0 THEN 0 ELSE power(2, (b.b - 1) / 4.0) END AS lo,
               CASE WHEN b.b = 0 THEN 1 WHEN b.b = 64 THEN power(2, 63 / 4.0) ELSE power(2, b.b / 4.0) END AS hi
        FROM b
    ), q AS (
        SELECT c.start, c.total, p.q,
               min(c.lo + (c.hi - c.lo) * (p.q * c.total - c.below) / c.n) AS ms
        FROM c CROSS JOIN (VALUES (0.50), (0.95), (0.99)) AS p (q)
        WHERE c.below + c.n >= p.q * c.total
          AND c.below < p.q * c.total
        GROUP BY 1, 2, 3
    )
    SELECT q.start, q.total::bigint,
           round(max(q.ms) FILTER (WHERE q.q = 0.50), 2)::float8,
           round(max(q.ms) FILTER (WHERE q.q = 0.95), 2)::float8,
           round(max(q.ms) FILTER (WHERE q.q = 0.99), 2)::float8
    FROM q
    GROUP BY 1, 2
$$;

-- Per day and serving profile: searches, labelled ones, the label rate and the mean
-- reciprocal rank of the best label of the labelled ones (NULL when none is labelled).
CREATE OR REPLACE FUNCTION toolgate_analytics_profiles(since timestamptz)
RETURNS TABLE (day date, profile text, searches bigint, labelled bigint, label_rate double precision,
               mrr double precision)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT (h.hour AT TIME ZONE 'UTC')::date, h.profile, sum(h.searches)::bigint, sum(h.labelled)::bigint,
           round(sum(h.labelled)::numeric / sum(h.searches), 4)::float8,
           round((sum(h.rr_sum) / nullif(sum(h.labelled), 0))::numeric, 4)::float8
    FROM toolgate_search_hourly(since) h
    GROUP BY 1, 2
$$;

-- How the catalog learns, per day (UTC) of the window, every day listed: searches and those
-- with a result the memory branch scored (memory_helped); labelled searches, and of those
-- the ones whose best label was ranked first (hit_1) and in the top 5 (hit_5); the memories
-- stored now that were first stored by the end of the day (a memory removed since is not
-- counted). Of every tenant (want NULL: the searches from the hourly rollups, the labels
-- from search_labels, a tenth of the searches at most), or of one (want: '' the operator's,
-- a key's tenant, 'key:' || id): its searches and their labels from the tenants' rollups
-- (those logged with their tenant, since migration 0054), and its memories.
CREATE OR REPLACE FUNCTION toolgate_analytics_learning(since timestamptz, want text)
RETURNS TABLE (day date, searches bigint, memory_helped bigint, labelled bigint, hit_1 bigint, hit_5 bigint,
               memories bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    WITH days AS (
        SELECT d::date AS day
        FROM generate_series((since AT TIME ZONE 'UTC')::date, (now() AT TIME ZONE 'UTC')::date, interval '1 day') d
    ), best AS (
        SELECT (x.search_created_at AT TIME ZONE 'UTC')::date AS day, min(x.rank) AS rank
        FROM search_labels x
        WHERE x.search_created_at >= since AND want IS NULL
        GROUP BY 1, x.search_id, x.search_created_at
    ), hours AS (
        -- every tenant's: the searches of the hourly rollups, the labels counted here
        SELECT (h.hour AT TIME ZONE 'UTC')::date AS day, h.searches, h.memory_helped,
               0::bigint AS labelled, 0::bigint AS hit_1, 0::bigint AS hit_5
        FROM toolgate_search_hourly(since) h
        WHERE want IS NULL
        UNION ALL
        SELECT b.day, 0, 0, 1, (b.rank = 1)::int, (b.rank <= 5)::int
        FROM best b
        UNION ALL
        -- one tenant's: its rows of the tenants' rollups
        SELECT (t.hour AT TIME ZONE 'UTC')::date, t.searches, t.memory_helped, t.labelled, t.hit_1, t.hit_5
        FROM toolgate_search_tenants(since, want) t
        WHERE want IS NOT NULL
    ), traffic AS (
        SELECT h.day, sum(h.searches)::bigint AS searches, sum(h.memory_helped)::bigint AS memory_helped,
               sum(h.labelled)::bigint AS labelled, sum(h.hit_1)::bigint AS hit_1, sum(h.hit_5)::bigint AS hit_5
        FROM hours h
        GROUP BY 1
    ), stored AS (
        SELECT (m.created_at AT TIME ZONE 'UTC')::date AS day, count(*) AS n
        FROM tool_memories m
        WHERE want IS NULL OR m.tenant = want
        GROUP BY 1
    )
    SELECT d.day, coalesce(t.searches, 0), coalesce(t.memory_helped, 0), coalesce(t.labelled, 0),
           coalesce(t.hit_1, 0), coalesce(t.hit_5, 0),
           (SELECT coalesce(sum(s.n), 0)::bigint FROM stored s WHERE s.day <= d.day)
    FROM days d
    LEFT JOIN traffic t ON t.day = d.day
$$;

-- The tenants with searches logged with their tenant from `since` on, or with memories.
CREATE OR REPLACE FUNCTION toolgate_analytics_tenants(since timestamptz)
RETURNS TABLE (tenant text)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT t.tenant FROM toolgate_search_tenants(since, NULL) t
    UNION
    SELECT c.tenant FROM tool_memory_tenants c
$$;

-- Queries that found nothing, per endpoint and filters (the sources and tags that may have
-- emptied the result): how often, and when last.
CREATE OR REPLACE FUNCTION toolgate_analytics_zero_results(since timestamptz)
RETURNS TABLE (query text, endpoint text, filters jsonb, searches bigint, last_seen timestamptz)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT p.query, p.endpoint, p.filters, sum(p.searches)::bigint, max(p.last_seen)
    FROM (
        SELECT r.query, r.endpoint, r.filters, r.searches, r.last_seen
        FROM search_rollup_zero r
        WHERE r.day >= (since AT TIME ZONE 'UTC')::date
          AND EXISTS (SELECT FROM search_rollup_state s WHERE s.through IS NOT NULL)
        UNION ALL
        SELECT z.query, z.endpoint, z.filters, z.searches, z.last_seen
        FROM toolgate_search_zero_of(greatest(since, toolgate_search_rollup_through()), 'infinity') z
    ) p
    GROUP BY 1, 2, 3
$$;

-- Low-score searches (toolgate_search_low_score) per query, endpoint, mode and filters: how
-- often, the least top score and top BM25, when last.
CREATE OR REPLACE FUNCTION toolgate_analytics_low_score(since timestamptz)
RETURNS TABLE (query text, endpoint text, mode text, filters jsonb, searches bigint, top_score double precision,
               top_bm25 double precision, last_seen timestamptz)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT p.query, p.endpoint, p.mode, p.filters, sum(p.searches)::bigint, min(p.top_score), min(p.top_bm25),
           max(p.last_seen)
    FROM (
        SELECT r.query, r.endpoint, r.mode, r.filters, r.searches, r.top_score, r.top_bm25, r.last_seen
        FROM search_rollup_low r
        WHERE r.day >= (since AT TIME ZONE 'UTC')::date
          AND EXISTS (SELECT FROM search_rollup_state s WHERE s.through IS NOT NULL)
        UNION ALL
        SELECT o.query, o.endpoint, o.mode, o.filters, o.searches, o.top_score, o.top_bm25, o.last_seen
        FROM toolgate_search_low_of(greatest(since, toolgate_search_rollup_through()), 'infinity') o
    ) p
    GROUP BY 1, 2, 3, 4
$$;

-- Queries by how often they were searched (any endpoint, filters and mode).
CREATE OR REPLACE FUNCTION toolgate_analytics_top_queries(since timestamptz)
RETURNS TABLE (query text, searches bigint, zero_result bigint, last_seen timestamptz)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT p.query, sum(p.searches)::bigint, sum(p.zero_result)::bigint, max(p.last_seen)
    FROM (
        SELECT r.query, r.searches, r.zero_result, r.last_seen
        FROM search_rollup_queries r
        WHERE r.day >= (since AT TIME ZONE 'UTC')::date
          AND EXISTS (SELECT FROM search_rollup_state s WHERE s.through IS NOT NULL)
        UNION ALL
        SELECT q.query, q.searches, q.zero_result, q.last_seen
        FROM toolgate_search_queries_of(greatest(since, toolgate_search_rollup_through()), 'infinity') q
    ) p
    GROUP BY 1
$$;

-- Per tool of the catalog, and per tool no longer in it that a search returned or a label
-- names: its source and whether search may return it (NULL: gone from the catalog), how
-- often searches returned it and returned it first (the rollups' totals, and the searches
-- after `through` from the log), and how often an agent chose it after a search and how
-- often that worked (toolgate_search_tool_labels).
CREATE OR REPLACE FUNCTION toolgate_analytics_tools()
RETURNS TABLE (tool_name text, source text, searchable boolean, returned bigint, returned_first bigint,
               called bigint, succeeded bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    WITH tail AS (
        SELECT t.tool_name, sum(t.returned)::bigint AS returned, sum(t.returned_first)::bigint AS returned_first
        FROM toolgate_search_tools_of(toolgate_search_rollup_through(), 'infinity') t
        GROUP BY 1
    ), rolled AS (
        SELECT r.tool_name, r.returned, r.returned_first
        FROM search_rollup_tool_totals r
        WHERE EXISTS (SELECT FROM search_rollup_state s WHERE s.through IS NOT NULL)
    ), chosen AS (
        SELECT c.tool_name, c.called, c.succeeded FROM toolgate_search_tool_labels() c
    ), cat AS (
        SELECT t.name, s.name AS source, t.enabled AND t.review_state = 'approved' AS searchable
        FROM tools t JOIN sources s ON s.id = t.source_id
    )
    SELECT coalesce(cat.name, rolled.tool_name, tail.tool_name, chosen.tool_name), cat.source, cat.searchable,
           coalesce(rolled.returned, 0) + coalesce(tail.returned, 0),
           coalesce(rolled.returned_first, 0) + coalesce(tail.returned_first, 0),
           coalesce(chosen.called, 0), coalesce(chosen.succeeded, 0)
    FROM cat
    FULL JOIN rolled ON rolled.tool_name = cat.name
    FULL JOIN tail ON tail.tool_name = coalesce(cat.name, rolled.tool_name)
    FULL JOIN chosen ON chosen.tool_name = coalesce(cat.name, rolled.tool_name, tail.tool_name)
$$;

-- The n slowest searches from `since` on.
CREATE OR REPLACE FUNCTION toolgate_analytics_slowest(since timestamptz, n integer)
RETURNS TABLE (id bigint, created_at timestamptz, latency_ms double precision, timings jsonb, endpoint text,
               mode text, k integer, result_count integer, query text)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    WITH top AS (
        SELECT c.search_id, c.created_at, c.latency_ms
        FROM (
            SELECT r.search_id, r.created_at, r.latency_ms
            FROM search_rollup_slowest r
            WHERE r.day >= (since AT TIME ZONE 'UTC')::date AND r.created_at >= since
              AND EXISTS (SELECT FROM search_rollup_state s WHERE s.through IS NOT NULL)
            UNION ALL
            SELECT l.id, l.created_at, l.latency_ms
            FROM search_log l
            WHERE l.created_at >= greatest(since, toolgate_search_rollup_through()) AND l.latency_ms IS NOT NULL
        ) c
        ORDER BY c.latency_ms DESC, c.search_id
        LIMIT n
    )
    SELECT l.id, l.created_at, t.latency_ms, l.timings,
           toolgate_search_endpoint(l.endpoint, l.session_id, l.caller, l.caller_key_id), l.mode, l.k,
           l.result_count, l.query
    FROM top t
    JOIN search_log l ON l.id = t.search_id AND l.created_at = t.created_at
    ORDER BY t.latency_ms DESC, t.search_id
$$;

-- ---------------------------------------------------------------------------------------
-- Views, for psql: each over the whole retained log.

-- Searches per day with latency percentiles (latency_ms: embedding + database time), the
-- searches of each endpoint and the low-score ones. Read from the log itself (percentiles
-- do not add up): it scans every row.
CREATE OR REPLACE VIEW search_daily AS
SELECT (created_at AT TIME ZONE 'UTC')::date AS day,
       count(*) AS searches,
       count(*) FILTER (WHERE result_count = 0) AS zero_result,
       round(avg(result_count)::numeric, 1) AS avg_results,
       round((percentile_cont(0.50) WITHIN GROUP (ORDER BY latency_ms))::numeric, 2) AS p50_ms,
       round((percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms))::numeric, 2) AS p95_ms,
       round((percentile_cont(0.99) WITHIN GROUP (ORDER BY latency_ms))::numeric, 2) AS p99_ms,
       round(max(latency_ms)::numeric, 2) AS max_ms,
       count(*) FILTER (WHERE toolgate_search_endpoint(endpoint, session_id, caller, caller_key_id) = 'rest') AS rest,
       count(*) FILTER (WHERE toolgate_search_endpoint(endpoint, session_id, caller, caller_key_id) = 'find_tools') AS find_tools,
       count(*) FILTER (WHERE toolgate_search_low_score(mode, result_count, results, no_good_match)) AS low_score,
       count(*) FILTER (WHERE toolgate_search_low_confidence(result_count, no_good_match)) AS low_confidence
FROM search_log
GROUP BY 1;

-- Per hour, endpoint, serving profile and mode: searches, zero-result, low-score and
-- labelled ones, the MRR of the best label of the labelled ones, and the low-confidence
-- ones.
CREATE OR REPLACE VIEW search_traffic AS
SELECT h.hour, h.endpoint, h.profile, h.mode, h.searches, h.zero_result, h.low_score, h.labelled,
       round((h.rr_sum / nullif(h.labelled, 0))::numeric, 4) AS mrr, h.low_confidence
FROM toolgate_search_hourly('-infinity')
    AS h (hour, endpoint, profile, mode, searches, zero_result, low_score, labelled, rr_sum, low_confidence, memory_helped);

-- Per hour: searches and their latency percentiles (from the histogram, within 19%),
-- over every endpoint. Unlike search_daily, it reads the rollups.
CREATE OR REPLACE VIEW search_latency_hourly AS
SELECT l.start AS hour, l.searches, l.p50_ms, l.p95_ms, l.p99_ms
FROM toolgate_analytics_latency('-infinity', 'hour', NULL) AS l (start, searches, p50_ms, p95_ms, p99_ms);

-- Queries that found nothing.
CREATE OR REPLACE VIEW search_zero_result_queries AS
SELECT z.query, z.searches, z.last_seen, z.endpoint, z.filters
FROM toolgate_analytics_zero_results('-infinity') AS z (query, endpoint, filters, searches, last_seen);

-- Searches with a weak best result (toolgate_search_low_score).
CREATE OR REPLACE VIEW search_low_score_queries AS
SELECT s.query, s.mode, s.searches, round(s.top_score::numeric, 5) AS min_top_score,
       round(s.top_bm25::numeric, 3) AS min_top_bm25, s.last_seen, s.endpoint, s.filters
FROM toolgate_analytics_low_score('-infinity')
    AS s (query, endpoint, mode, filters, searches, top_score, top_bm25, last_seen);

-- Per day since the first search logged: searches and those a memory helped, labelled
-- searches with their best label first and in the top 5, memories stored by the day's end.
CREATE OR REPLACE VIEW search_learning_daily AS
SELECT l.day, l.searches, l.memory_helped, l.labelled, l.hit_1, l.hit_5, l.memories
FROM toolgate_analytics_learning(coalesce((SELECT min(created_at) FROM search_log), now()), NULL)
    AS l (day, searches, memory_helped, labelled, hit_1, hit_5, memories);

-- Queries by how often they were searched.
CREATE OR REPLACE VIEW search_top_queries AS
SELECT q.query, q.searches, q.zero_result, q.last_seen
FROM toolgate_analytics_top_queries('-infinity') AS q (query, searches, zero_result, last_seen);

-- Per tool: returned, returned first, chosen after a search (called) and chosen with
-- success, its source and whether search may return it.
CREATE OR REPLACE VIEW search_tool_popularity AS
SELECT t.tool_name, t.returned, t.returned_first, t.called, t.succeeded, t.source, t.searchable
FROM toolgate_analytics_tools()
    AS t (tool_name, source, searchable, returned, returned_first, called, succeeded);

-- Per search and tool an agent chose after it (search_labels; a tool both called and
-- reported counts once, label_source 'both'): the rank the search gave it, the profile that
-- served the search, its endpoint.
CREATE OR REPLACE VIEW search_used_rank AS
SELECT x.search_id, l.created_at, toolgate_search_profile(l.profile) AS profile, l.mode, l.k,
       x.tool_name, x.success, x.rank::bigint AS rank,
       toolgate_search_endpoint(l.endpoint, l.session_id, l.caller, l.caller_key_id) AS endpoint,
       x.label_source
FROM (
    SELECT search_id, search_created_at, tool_name, bool_or(success) AS success, min(rank) AS rank,
           CASE WHEN count(*) > 1 THEN 'both' ELSE min(label_source) END AS label_source
    FROM search_labels
    GROUP BY search_id, search_created_at, tool_name
) x
JOIN search_log l ON l.id = x.search_id AND l.created_at = x.search_created_at;

-- MRR and hit@k of the tools agents chose, per serving profile and mode: compares profiles
-- on real traffic. (hit_at_k is 1: a label names a tool its search returned.)
CREATE OR REPLACE VIEW search_profile_quality AS
SELECT profile, mode, count(*) AS used,
       round(avg(coalesce(1.0 / rank, 0)), 4) AS mrr,
       round(avg(CASE WHEN rank = 1 THEN 1.0 ELSE 0 END), 4) AS hit_at_1,
       round(avg(CASE WHEN rank <= 3 THEN 1.0 ELSE 0 END), 4) AS hit_at_3,
       round(avg(CASE WHEN rank <= 5 THEN 1.0 ELSE 0 END), 4) AS hit_at_5,
       round(avg(CASE WHEN rank IS NOT NULL THEN 1.0 ELSE 0 END), 4) AS hit_at_k
FROM search_used_rank
GROUP BY profile, mode;

-- Per day and serving profile: searches, labelled ones, label rate, MRR of the best label.
CREATE OR REPLACE VIEW search_profile_daily AS
SELECT p.day, p.profile, p.searches, p.labelled, p.label_rate, p.mrr
FROM toolgate_analytics_profiles('-infinity') AS p (day, profile, searches, labelled, label_rate, mrr);

-- The 100 slowest searches.
CREATE OR REPLACE VIEW search_slowest AS
SELECT s.id, s.created_at, round(s.latency_ms::numeric, 2) AS latency_ms, s.timings, s.mode, s.k,
       s.result_count, left(s.query, 80) AS query, s.endpoint
FROM toolgate_analytics_slowest('-infinity', 100)
    AS s (id, created_at, latency_ms, timings, endpoint, mode, k, result_count, query)
ORDER BY s.latency_ms DESC;

-- Label rate and the rank of the chosen tool, per day of the search, serving profile and
-- label source ('call', 'feedback', and 'any': a search labelled by either counts once).
-- searches: searches of that day and profile; labelled: those with at least one label of
-- that source; label_rate = labelled / searches. mean_rank, median_rank and mrr are over
-- the labels (a search may have several), median_delay_ms from search to call.
CREATE OR REPLACE VIEW search_label_stats AS
WITH searches AS (
    SELECT (created_at AT TIME ZONE 'UTC')::date AS day, toolgate_search_profile(profile) AS profile,
           count(*) AS searches
    FROM search_log
    GROUP BY 1, 2
), labels AS (
    SELECT (l.created_at AT TIME ZONE 'UTC')::date AS day, toolgate_search_profile(l.profile) AS profile,
           coalesce(x.label_source, 'any') AS label_source,
           count(DISTINCT x.search_id) AS labelled, count(*) AS labels,
           avg(x.rank) AS mean_rank,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY x.rank) AS median_rank,
           avg(1.0 / x.rank) AS mrr,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY x.delay_ms) AS median_delay_ms
    FROM search_labels x
    JOIN search_log l ON l.id = x.search_id AND l.created_at = x.search_created_at
    GROUP BY GROUPING SETS (((l.created_at AT TIME ZONE 'UTC')::date, toolgate_search_profile(l.profile), x.label_source),
                            ((l.created_at AT TIME ZONE 'UTC')::date, toolgate_search_profile(l.profile)))
)
SELECT s.day, s.profile, b.label_source, s.searches, b.labelled,
       round(b.labelled::numeric / s.searches, 4) AS label_rate,
       b.labels,
       round(b.mean_rank, 2) AS mean_rank,
       round(b.median_rank::numeric, 1) AS median_rank,
       round(b.mrr, 4) AS mrr,
       round(b.median_delay_ms::numeric) AS median_delay_ms
FROM searches s
JOIN labels b ON b.day = s.day AND b.profile = s.profile;

-- ---------------------------------------------------------------------------------------
-- The rollup (the search_rollup job, internal/analytics.Rollup, calls this until it says it
-- caught up; each call is one transaction).
--
-- One step, serialized by the lock on search_rollup_state's row:
--   1. when nothing is rolled up yet or the definitions changed (the digest): empty the
--      rollups and start from the first search logged; the step ends there (so the
--      tables' exclusive lock of TRUNCATE is held for a moment only);
--   2. recompute the rolled-up hours whose searches got labels created since
--      labels_through (up to now() - lag);
--   3. roll up the whole hours after `through`, at most max_hours of them, up to the hour
--      `lag` ago: hourly rows inserted, the days', months' and tools' rows added to, each
--      day's slowest 500 kept.
-- The aggregates get memory to hash a day of searches; JIT would take longer to compile them
-- than they run. `lag` leaves time for the transactions that logged a search or wrote a label to commit
-- before their rows are rolled up (a row committed later than `lag` after its created_at
-- would be missed, until the next rebuild).
CREATE OR REPLACE FUNCTION toolgate_search_rollup_step(max_hours integer, lag interval,
                                                       OUT rolled_through timestamptz, OUT hours_rolled integer,
                                                       OUT hours_relabelled integer, OUT caught_up boolean)
LANGUAGE plpgsql SET work_mem = '64MB' SET jit = off AS $$
DECLARE
    st        search_rollup_state;
    digest    text := toolgate_search_rollup_rules();
    target    timestamptz := date_trunc('hour', now() - lag, 'UTC');
    labels_to timestamptz := now() - lag;
    upto      timestamptz;
    dirty     timestamptz[];
BEGIN
    hours_rolled := 0;
    hours_relabelled := 0;
    SELECT * INTO st FROM search_rollup_state FOR UPDATE;
    IF st.through IS NULL OR st.rules IS DISTINCT FROM digest THEN
        TRUNCATE search_rollup_hourly, search_rollup_queries, search_rollup_zero, search_rollup_low,
                 search_rollup_tools, search_rollup_tool_totals, search_rollup_slowest, search_rollup_latency,
                 search_rollup_tenants;
        rolled_through := least(coalesce(date_trunc('hour', (SELECT min(l.created_at) FROM search_log l), 'UTC'), target), target);
        UPDATE search_rollup_state
           SET through = rolled_through, labels_through = labels_to, rules = digest, updated_at = now();
        caught_up := false;
        RETURN;
    END IF;

    dirty := ARRAY(
        SELECT DISTINCT date_trunc('hour', x.search_created_at, 'UTC')
        FROM search_labels x
        WHERE x.created_at >= st.labels_through AND x.created_at < labels_to AND x.search_created_at < st.through);
    DELETE FROM search_rollup_hourly WHERE hour = ANY (dirty);
    INSERT INTO search_rollup_hourly
    SELECT h.* FROM unnest(dirty) AS d (hour) CROSS JOIN LATERAL toolgate_search_hourly_of(d.hour, d.hour + interval '1 hour') h;
    DELETE FROM search_rollup_tenants WHERE hour = ANY (dirty);
    INSERT INTO search_rollup_tenants (hour, tenant, searches, memory_helped, labelled, hit_1, hit_5)
    SELECT h.* FROM unnest(dirty) AS d (hour) CROSS JOIN LATERAL toolgate_search_tenants_of(d.hour, d.hour + interval '1 hour') h;
    hours_relabelled := cardinality(dirty);

    upto := least(target, st.through + max_hours * interval '1 hour');
    IF upto > st.through THEN
        INSERT INTO search_rollup_hourly SELECT * FROM toolgate_search_hourly_of(st.through, upto);
        INSERT INTO search_rollup_tenants (hour, tenant, searches, memory_helped, labelled, hit_1, hit_5)
        SELECT * FROM toolgate_search_tenants_of(st.through, upto);
        INSERT INTO search_rollup_latency (hour, endpoint, bucket, searches)
        SELECT * FROM toolgate_search_latency_of(st.through, upto);
        INSERT INTO search_rollup_queries AS r (day, query, searches, zero_result, last_seen)
        SELECT * FROM toolgate_search_queries_of(st.through, upto)
        ON CONFLICT (day, md5(query)) DO UPDATE
            SET searches = r.searches + excluded.searches,
                zero_result = r.zero_result + excluded.zero_result,
                last_seen = greatest(r.last_seen, excluded.last_seen);
        INSERT INTO search_rollup_zero AS r (day, query, endpoint, filters, searches, last_seen)
        SELECT * FROM toolgate_search_zero_of(st.through, upto)
        ON CONFLICT (day, endpoint, md5(query), md5(filters::text)) DO UPDATE
            SET searches = r.searches + excluded.searches,
                last_seen = greatest(r.last_seen, excluded.last_seen);
        INSERT INTO search_rollup_low AS r (day, query, endpoint, mode, filters, searches, top_score, top_bm25, last_seen)
        SELECT * FROM toolgate_search_low_of(st.through, upto)
        ON CONFLICT (day, endpoint, mode, md5(query), md5(filters::text)) DO UPDATE
            SET searches = r.searches + excluded.searches,
                top_score = least(r.top_score, excluded.top_score),
                top_bm25 = least(r.top_bm25, excluded.top_bm25),
                last_seen = greatest(r.last_seen, excluded.last_seen);
        WITH t AS MATERIALIZED (
            SELECT * FROM toolgate_search_tools_of(st.through, upto)
        ), months AS (
            INSERT INTO search_rollup_tools AS r (month, tool_name, returned, returned_first)
            SELECT * FROM t
            ON CONFLICT (month, tool_name) DO UPDATE
                SET returned = r.returned + excluded.returned,
                    returned_first = r.returned_first + excluded.returned_first
        )
        INSERT INTO search_rollup_tool_totals AS r (tool_name, returned, returned_first)
        SELECT t.tool_name, sum(t.returned), sum(t.returned_first) FROM t GROUP BY t.tool_name
        ON CONFLICT (tool_name) DO UPDATE
            SET returned = r.returned + excluded.returned,
                returned_first = r.returned_first + excluded.returned_first;
        INSERT INTO search_rollup_slowest (day, search_id, created_at, latency_ms)
        SELECT * FROM toolgate_search_slowest_of(st.through, upto, 500);
        DELETE FROM search_rollup_slowest s
        USING (
            SELECT x.search_id, x.created_at
            FROM (
                SELECT r.search_id, r.created_at,
                       row_number() OVER (PARTITION BY r.day ORDER BY r.latency_ms DESC, r.search_id) AS n
                FROM search_rollup_slowest r
                WHERE r.day >= (st.through AT TIME ZONE 'UTC')::date AND r.day <= (upto AT TIME ZONE 'UTC')::date
            ) x
            WHERE x.n > 500
        ) o
        WHERE s.search_id = o.search_id AND s.created_at = o.created_at;
        hours_rolled := extract(epoch FROM upto - st.through)::integer / 3600;
        st.through := upto;
    END IF;

    UPDATE search_rollup_state
       SET through = st.through, labels_through = greatest(st.labels_through, labels_to), updated_at = now();
    rolled_through := st.through;
    caught_up := st.through >= target;
END $$;

-- ---------------------------------------------------------------------------------------
-- Retention: dropping a month of the retrieval log drops its labels and its rollups too, and
-- takes its searches out of the tools' totals.
CREATE OR REPLACE FUNCTION toolgate_drop_search_log_partitions(keep interval) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    r       record;
    lo      date;
    hi      date;
    dropped integer := 0;
BEGIN
    FOR r IN
        SELECT c.relname
        FROM pg_inherits i
        JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'search_log'::regclass
          AND c.relname ~ '^search_log_[0-9]{6}$'
          AND (to_date(substr(c.relname, 12), 'YYYYMM') + interval '1 month') <= now() - keep
    LOOP
        lo := to_date(substr(r.relname, 12), 'YYYYMM');
        hi := (lo + interval '1 month')::date;
        EXECUTE format('DROP TABLE %I', r.relname);
        DELETE FROM search_labels WHERE search_created_at >= lo AND search_created_at < hi;
        UPDATE search_rollup_tool_totals t
           SET returned = t.returned - m.returned, returned_first = t.returned_first - m.returned_first
          FROM (SELECT tool_name, sum(returned) AS returned, sum(returned_first) AS returned_first
                FROM search_rollup_tools WHERE month >= lo AND month < hi GROUP BY tool_name) m
         WHERE t.tool_name = m.tool_name;
        DELETE FROM search_rollup_hourly WHERE hour >= lo AND hour < hi;
        DELETE FROM search_rollup_queries WHERE day >= lo AND day < hi;
        DELETE FROM search_rollup_zero WHERE day >= lo AND day < hi;
        DELETE FROM search_rollup_low WHERE day >= lo AND day < hi;
        DELETE FROM search_rollup_tools WHERE month >= lo AND month < hi;
        DELETE FROM search_rollup_slowest WHERE day >= lo AND day < hi;
        DELETE FROM search_rollup_latency WHERE hour >= lo AND hour < hi;
        DELETE FROM search_rollup_tenants WHERE hour >= lo AND hour < hi;
        dropped := dropped + 1;
    END LOOP;
    RETURN dropped;
END $$;

-- The low-score rule before it read the answer's confidence (migration 0048): search_daily,
-- the last user of that overload, reads the new one since it was replaced above.
DROP FUNCTION IF EXISTS toolgate_search_low_score(text, integer, jsonb);

-- The rollups were computed with the definitions of the rules and *_of functions they
-- recorded: when this file changed them, they are dropped from the answers at once (and
-- rebuilt by the next search_rollup job).
UPDATE search_rollup_state SET through = NULL, updated_at = now()
WHERE through IS NOT NULL AND rules IS DISTINCT FROM toolgate_search_rollup_rules();
