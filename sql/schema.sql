--
-- PostgreSQL database dump
--



SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: vector; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public;


--
-- Name: EXTENSION vector; Type: COMMENT; Schema: -; Owner: -
--

COMMENT ON EXTENSION vector IS 'vector data type and ivfflat and hnsw access methods';


--
-- Name: river_job_state; Type: TYPE; Schema: public; Owner: -
--

CREATE TYPE public.river_job_state AS ENUM (
    'available',
    'cancelled',
    'completed',
    'discarded',
    'pending',
    'retryable',
    'running',
    'scheduled'
);


--
-- Name: river_job_state_in_bitmask(bit, public.river_job_state); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.river_job_state_in_bitmask(bitmask bit, state public.river_job_state) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT CASE state
        WHEN 'available' THEN get_bit(bitmask, 7)
        WHEN 'cancelled' THEN get_bit(bitmask, 6)
        WHEN 'completed' THEN get_bit(bitmask, 5)
        WHEN 'discarded' THEN get_bit(bitmask, 4)
        WHEN 'pending'   THEN get_bit(bitmask, 3)
        WHEN 'retryable' THEN get_bit(bitmask, 2)
        WHEN 'running'   THEN get_bit(bitmask, 1)
        WHEN 'scheduled' THEN get_bit(bitmask, 0)
        ELSE 0
    END = 1;
$$;


--
-- Name: toolgate_ab_bucket(bigint, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_ab_bucket(experiment bigint, unit text) RETURNS double precision
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
    SELECT ('x' || left(encode(sha256(convert_to(experiment::text || ':' || unit, 'UTF8')), 'hex'), 13))::bit(52)::bigint
           / 4503599627370496::double precision
$$;


--
-- Name: toolgate_ab_unit(text, text, bigint, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_ab_unit(unit text, session_id text, caller_key_id bigint, caller text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT coalesce('key:' || caller_key_id, 'caller:' || coalesce(caller, ''))
           || CASE WHEN unit = 'session' AND session_id IS NOT NULL THEN '/session:' || session_id ELSE '' END
$$;


--
-- Name: toolgate_analytics_latency(timestamp with time zone, text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_analytics_latency(since timestamp with time zone, bucket text, endpoint text) RETURNS TABLE(start timestamp with time zone, searches bigint, p50_ms double precision, p95_ms double precision, p99_ms double precision)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
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


--
-- Name: toolgate_analytics_learning(timestamp with time zone, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_analytics_learning(since timestamp with time zone, want text) RETURNS TABLE(day date, searches bigint, memory_helped bigint, labelled bigint, hit_1 bigint, hit_5 bigint, memories bigint)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
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


--
-- Name: toolgate_analytics_low_score(timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_analytics_low_score(since timestamp with time zone) RETURNS TABLE(query text, endpoint text, mode text, filters jsonb, searches bigint, top_score double precision, top_bm25 double precision, last_seen timestamp with time zone)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
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


--
-- Name: toolgate_analytics_profiles(timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_analytics_profiles(since timestamp with time zone) RETURNS TABLE(day date, profile text, searches bigint, labelled bigint, label_rate double precision, mrr double precision)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT (h.hour AT TIME ZONE 'UTC')::date, h.profile, sum(h.searches)::bigint, sum(h.labelled)::bigint,
           round(sum(h.labelled)::numeric / sum(h.searches), 4)::float8,
           round((sum(h.rr_sum) / nullif(sum(h.labelled), 0))::numeric, 4)::float8
    FROM toolgate_search_hourly(since) h
    GROUP BY 1, 2
$$;


--
-- Name: toolgate_analytics_searches(timestamp with time zone, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_analytics_searches(since timestamp with time zone, bucket text) RETURNS TABLE(start timestamp with time zone, endpoint text, searches bigint, zero_result bigint, labelled bigint, low_score bigint, low_confidence bigint)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT date_trunc(bucket, h.hour, 'UTC'), h.endpoint,
           sum(h.searches)::bigint, sum(h.zero_result)::bigint, sum(h.labelled)::bigint,
           sum(h.low_score)::bigint, sum(h.low_confidence)::bigint
    FROM toolgate_search_hourly(since) h
    GROUP BY 1, 2
$$;


--
-- Name: toolgate_analytics_since(integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_analytics_since(days integer) RETURNS timestamp with time zone
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT date_trunc('day', now(), 'UTC') - (days - 1) * interval '1 day'
$$;


--
-- Name: toolgate_analytics_slowest(timestamp with time zone, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_analytics_slowest(since timestamp with time zone, n integer) RETURNS TABLE(id bigint, created_at timestamp with time zone, latency_ms double precision, timings jsonb, endpoint text, mode text, k integer, result_count integer, query text)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
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


--
-- Name: toolgate_analytics_tenants(timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_analytics_tenants(since timestamp with time zone) RETURNS TABLE(tenant text)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT t.tenant FROM toolgate_search_tenants(since, NULL) t
    UNION
    SELECT c.tenant FROM tool_memory_tenants c
$$;


--
-- Name: toolgate_analytics_tools(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_analytics_tools() RETURNS TABLE(tool_name text, source text, searchable boolean, returned bigint, returned_first bigint, called bigint, succeeded bigint)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
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


--
-- Name: toolgate_analytics_top_queries(timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_analytics_top_queries(since timestamp with time zone) RETURNS TABLE(query text, searches bigint, zero_result bigint, last_seen timestamp with time zone)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
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


--
-- Name: toolgate_analytics_zero_results(timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_analytics_zero_results(since timestamp with time zone) RETURNS TABLE(query text, endpoint text, filters jsonb, searches bigint, last_seen timestamp with time zone)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
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


--
-- Name: toolgate_bm25_corpus(text[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_bm25_corpus(allowed text[]) RETURNS TABLE(n double precision, avgdl double precision, seen bigint[])
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT c.docs::float8, CASE WHEN c.docs > 0 THEN c.total_len / c.docs ELSE 1 END, c.seen
    FROM (
        SELECT sc.docs, sc.total_len, NULL::bigint[] AS seen
        FROM search_corpus sc
        WHERE allowed IS NULL
        UNION ALL
        SELECT coalesce(sum(ss.docs), 0)::bigint, coalesce(sum(ss.total_len), 0)::float8, a.ids
        FROM (SELECT ARRAY(SELECT x.id FROM sources x WHERE x.name = ANY (allowed)) AS ids) a
        LEFT JOIN search_source_corpus ss ON ss.source_id = ANY (a.ids)
        WHERE allowed IS NOT NULL
        GROUP BY a.ids
    ) c
$$;


--
-- Name: toolgate_bm25_df(text, bigint[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_bm25_df(lex text, seen bigint[]) RETURNS bigint
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    AS $$
BEGIN
    IF seen IS NULL THEN
        RETURN (SELECT l.df FROM search_lexemes l WHERE l.lexeme = lex);
    END IF;
    RETURN (SELECT sum(l.df) FROM search_source_lexemes l WHERE l.lexeme = lex AND l.source_id = ANY (seen));
END $$;


--
-- Name: toolgate_bm25_idf(double precision, double precision); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_bm25_idf(n double precision, df double precision) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT ln(1 + (n - df + 0.5) / (df + 0.5))
$$;


--
-- Name: toolgate_bm25_impact(real, real, double precision); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_bm25_impact(tf real, doc_len real, avgdl double precision) RETURNS real
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
    SELECT toolgate_bm25_term(tf, doc_len, avgdl)::real
$$;


--
-- Name: toolgate_bm25_term(double precision, double precision, double precision); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_bm25_term(tf double precision, doc_len double precision, avgdl double precision) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT tf * (1.2 + 1) / (tf + 1.2 * (1 - 0.75 + 0.75 * doc_len / greatest(avgdl, 1e-9)))
$$;


--
-- Name: toolgate_cjk_bigrams(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_cjk_bigrams(txt text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    AS $$
DECLARE
    cjk constant text := '[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+';
BEGIN
    IF txt IS NULL OR txt !~ cjk THEN
        RETURN '';
    END IF;
    RETURN (SELECT coalesce(string_agg(substr(m.run, i, 2), ' ' ORDER BY m.ord, i), '')
            FROM regexp_matches(txt, cjk, 'g') WITH ORDINALITY AS r (a, ord)
            CROSS JOIN LATERAL (SELECT r.a[1] AS run, r.ord) m
            CROSS JOIN LATERAL generate_series(1, length(m.run) - 1) AS i
            WHERE length(m.run) >= 3);
END $$;


--
-- Name: toolgate_components_search_queue(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_components_search_queue() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    kinds constant text[] := ARRAY['question', 'observed', 'topics', 'profile_tags', 'profile_function',
                                   'profile_when_to_use', 'gloss', 'expansion'];
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO search_queue (tool_id) SELECT DISTINCT tool_id FROM new_rows WHERE kind = ANY (kinds);
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO search_queue (tool_id) SELECT DISTINCT tool_id FROM old_rows WHERE kind = ANY (kinds);
    ELSE
        INSERT INTO search_queue (tool_id)
        SELECT DISTINCT n.tool_id FROM new_rows n JOIN old_rows o
          ON o.tool_id = n.tool_id AND o.kind = n.kind AND o.ordinal = n.ordinal
        WHERE (n.kind = ANY (kinds) OR o.kind = ANY (kinds)) AND n.text IS DISTINCT FROM o.text;
    END IF;
    RETURN NULL;
END $$;


--
-- Name: toolgate_create_vector_partition(bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_create_vector_partition(p_set bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    EXECUTE format('CREATE TABLE %I (LIKE tool_vectors INCLUDING DEFAULTS)', toolgate_vector_partition(p_set));
    EXECUTE format('ALTER TABLE tool_vectors ATTACH PARTITION %I FOR VALUES IN (%s)',
                   toolgate_vector_partition(p_set), p_set);
END $$;


--
-- Name: toolgate_detect_language(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_detect_language(txt text) RETURNS regconfig
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT coalesce((
        SELECT s.language FROM search_stopwords s
        WHERE s.word = ANY (tsvector_to_array(to_tsvector('simple', left(txt, 2000))))
        GROUP BY s.language
        HAVING count(*) >= 2
        ORDER BY count(*) DESC, s.language <> 'english', s.language
        LIMIT 1), 'english')::regconfig
$$;


--
-- Name: toolgate_drop_search_log_partitions(interval); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_drop_search_log_partitions(keep interval) RETURNS integer
    LANGUAGE plpgsql
    AS $_$
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
END $_$;


--
-- Name: toolgate_drop_vector_indexes(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_drop_vector_indexes() RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    ix regclass;
BEGIN
    FOR ix IN SELECT i.indexrelid::regclass
              FROM pg_inherits h
              JOIN pg_index i ON i.indrelid = h.inhrelid
              JOIN pg_class c ON c.oid = i.indexrelid
              JOIN pg_am a ON a.oid = c.relam
              WHERE h.inhparent = 'tool_vectors'::regclass AND a.amname = 'hnsw' AND NOT c.relispartition
    LOOP
        EXECUTE format('DROP INDEX %s', ix);
    END LOOP;
END $$;


--
-- Name: toolgate_drop_vector_partition(bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_drop_vector_partition(p_set bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    EXECUTE format('DROP TABLE IF EXISTS %I', toolgate_vector_partition(p_set));
END $$;


--
-- Name: toolgate_ensure_search_log_partitions(integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_ensure_search_log_partitions(months_ahead integer) RETURNS integer
    LANGUAGE plpgsql
    AS $$
DECLARE
    m     date := date_trunc('month', now())::date;
    made  integer := 0;
    part  text;
BEGIN
    FOR i IN 0..months_ahead LOOP
        part := format('search_log_%s', to_char(m, 'YYYYMM'));
        IF to_regclass(part) IS NULL THEN
            EXECUTE format('CREATE TABLE %I PARTITION OF search_log FOR VALUES FROM (%L) TO (%L)',
                           part, m, (m + interval '1 month')::date);
            made := made + 1;
        END IF;
        m := (m + interval '1 month')::date;
    END LOOP;
    RETURN made;
END $$;


--
-- Name: toolgate_experiment_arms(bigint, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_experiment_arms(experiment bigint, max_per_key integer) RETURNS TABLE(arm text, units bigint, keys bigint, clusters bigint, rank_clusters bigint, searches bigint, counted bigint, labelled bigint, top_unit text, top_unit_searches bigint, top_key_id bigint, top_key text, top_key_searches bigint, label_rate double precision, label_rate_se double precision, mrr_all double precision, mrr_all_se double precision, mrr_labelled double precision, mrr_labelled_se double precision, mean_rank double precision, mean_rank_se double precision)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    WITH u AS (
        SELECT * FROM toolgate_experiment_units(experiment, max_per_key)
    ), c AS (
        SELECT * FROM toolgate_experiment_clusters(experiment, max_per_key)
    ), totals AS (
        SELECT u.arm, count(*) AS units, count(DISTINCT u.key_id) AS keys,
               sum(u.searches)::bigint AS searches, sum(u.n)::bigint AS counted, sum(u.nl)::bigint AS labelled,
               sum(u.rr_sum) AS rr_sum, sum(u.rank_sum) AS rank_sum
        FROM u GROUP BY u.arm
    ), cl AS (
        SELECT c.arm, count(*) FILTER (WHERE c.n > 0) AS clusters, count(*) FILTER (WHERE c.nl > 0) AS rank_clusters,
               sum(c.label_rate_res ^ 2) AS label_rate_ss, sum(c.mrr_all_res ^ 2) AS mrr_all_ss,
               sum(c.mrr_labelled_res ^ 2) AS mrr_labelled_ss, sum(c.mean_rank_res ^ 2) AS mean_rank_ss
        FROM c GROUP BY c.arm
    ), se AS (
        SELECT a.arm, t.units, t.keys, cl.clusters, cl.rank_clusters, t.searches, t.counted, t.labelled,
               t.labelled::double precision / nullif(t.counted, 0) AS label_rate,
               t.rr_sum / nullif(t.counted, 0) AS mrr_all,
               t.rr_sum / nullif(t.labelled, 0) AS mrr_labelled,
               t.rank_sum / nullif(t.labelled, 0) AS mean_rank,
               CASE WHEN cl.clusters >= 2 THEN sqrt(cl.clusters::double precision / (cl.clusters - 1) * cl.label_rate_ss) / t.counted END AS label_rate_se,
               CASE WHEN cl.clusters >= 2 THEN sqrt(cl.clusters::double precision / (cl.clusters - 1) * cl.mrr_all_ss) / t.counted END AS mrr_all_se,
               CASE WHEN cl.rank_clusters >= 2 THEN sqrt(cl.rank_clusters::double precision / (cl.rank_clusters - 1) * cl.mrr_labelled_ss) / t.labelled END AS mrr_labelled_se,
               CASE WHEN cl.rank_clusters >= 2 THEN sqrt(cl.rank_clusters::double precision / (cl.rank_clusters - 1) * cl.mean_rank_ss) / t.labelled END AS mean_rank_se
        FROM (VALUES ('control'), ('candidate')) AS a (arm)
        LEFT JOIN totals t ON t.arm = a.arm
        LEFT JOIN cl ON cl.arm = a.arm
    )
    SELECT se.arm, coalesce(se.units, 0), coalesce(se.keys, 0), coalesce(se.clusters, 0), coalesce(se.rank_clusters, 0),
           coalesce(se.searches, 0), coalesce(se.counted, 0), coalesce(se.labelled, 0),
           tu.unit, tu.searches, tk.key_id, tk.name, tk.searches,
           se.label_rate, se.label_rate_se, se.mrr_all, se.mrr_all_se,
           se.mrr_labelled, se.mrr_labelled_se, se.mean_rank, se.mean_rank_se
    FROM se
    LEFT JOIN LATERAL (
        SELECT u.unit, u.searches FROM u WHERE u.arm = se.arm ORDER BY u.searches DESC, u.unit LIMIT 1
    ) tu ON true
    LEFT JOIN LATERAL (
        SELECT u.key_id, coalesce(k.name, '') AS name, sum(u.searches)::bigint AS searches
        FROM u LEFT JOIN api_keys k ON k.id = u.key_id
        WHERE u.arm = se.arm AND u.key_id IS NOT NULL
        GROUP BY u.key_id, k.name ORDER BY 3 DESC, 2, 1 LIMIT 1
    ) tk ON true
$$;


--
-- Name: toolgate_experiment_clusters(bigint, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_experiment_clusters(experiment bigint, max_per_key integer) RETURNS TABLE(arm text, cluster text, n bigint, nl bigint, label_rate_res double precision, mrr_all_res double precision, mrr_labelled_res double precision, mean_rank_res double precision)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    WITH c AS (
        SELECT u.arm, CASE WHEN u.capped THEN u.principal ELSE u.unit END AS cluster,
               sum(u.n)::bigint AS n, sum(u.nl)::bigint AS nl, sum(u.rr_sum) AS rr_sum, sum(u.rank_sum) AS rank_sum
        FROM toolgate_experiment_units(experiment, max_per_key) u
        GROUP BY 1, 2
    ), m AS (
        SELECT c.*,
               sum(c.nl::double precision) OVER w / nullif(sum(c.n::double precision) OVER w, 0) AS label_rate,
               sum(c.rr_sum) OVER w / nullif(sum(c.n::double precision) OVER w, 0) AS mrr_all,
               sum(c.rr_sum) OVER w / nullif(sum(c.nl::double precision) OVER w, 0) AS mrr_labelled,
               sum(c.rank_sum) OVER w / nullif(sum(c.nl::double precision) OVER w, 0) AS mean_rank
        FROM c
        WINDOW w AS (PARTITION BY c.arm)
    )
    SELECT m.arm, m.cluster, m.n, m.nl,
           m.nl - m.label_rate * m.n, m.rr_sum - m.mrr_all * m.n,
           CASE WHEN m.nl > 0 THEN m.rr_sum - m.mrr_labelled * m.nl END,
           CASE WHEN m.nl > 0 THEN m.rank_sum - m.mean_rank * m.nl END
    FROM m
$$;


--
-- Name: toolgate_experiment_comparison(bigint, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_experiment_comparison(experiment bigint, max_per_key integer) RETURNS TABLE(control_searches bigint, candidate_searches bigint, label_rate_diff double precision, label_rate_diff_se double precision, mrr_all_diff double precision, mrr_all_diff_se double precision, mrr_labelled_diff double precision, mrr_labelled_diff_se double precision, mean_rank_diff double precision, mean_rank_diff_se double precision)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    WITH a AS (
        SELECT * FROM toolgate_experiment_arms(experiment, max_per_key)
    ), c AS (
        SELECT * FROM toolgate_experiment_clusters(experiment, max_per_key)
    ), cross_arm AS (
        SELECT sum(x.label_rate_res * y.label_rate_res) AS label_rate,
               sum(x.mrr_all_res * y.mrr_all_res) AS mrr_all,
               sum(x.mrr_labelled_res * y.mrr_labelled_res) AS mrr_labelled,
               sum(x.mean_rank_res * y.mean_rank_res) AS mean_rank
        FROM c x JOIN c y ON y.cluster = x.cluster AND y.arm = 'control'
        WHERE x.arm = 'candidate'
    ), f AS (
        -- the CR1 factors' geometric mean, and N_c·N_k, per metric kind
        SELECT CASE WHEN ca.clusters >= 2 AND ko.clusters >= 2
                    THEN sqrt(ca.clusters::double precision / (ca.clusters - 1) * ko.clusters / (ko.clusters - 1)) END AS f,
               CASE WHEN ca.rank_clusters >= 2 AND ko.rank_clusters >= 2
                    THEN sqrt(ca.rank_clusters::double precision / (ca.rank_clusters - 1) * ko.rank_clusters / (ko.rank_clusters - 1)) END AS fl,
               ca.counted::double precision * ko.counted AS nn, ca.labelled::double precision * ko.labelled AS nnl
        FROM a ca, a ko WHERE ca.arm = 'candidate' AND ko.arm = 'control'
    )
    -- v − least(v, 0): a variance that rounding made a hair negative is 0, a NULL stays NULL
    SELECT ko.searches, ca.searches,
           ca.label_rate - ko.label_rate, sqrt(v.label_rate - least(v.label_rate, 0)),
           ca.mrr_all - ko.mrr_all, sqrt(v.mrr_all - least(v.mrr_all, 0)),
           ca.mrr_labelled - ko.mrr_labelled, sqrt(v.mrr_labelled - least(v.mrr_labelled, 0)),
           ca.mean_rank - ko.mean_rank, sqrt(v.mean_rank - least(v.mean_rank, 0))
    FROM a ca
    JOIN a ko ON ko.arm = 'control'
    CROSS JOIN f
    CROSS JOIN cross_arm x
    CROSS JOIN LATERAL (
        SELECT ca.label_rate_se ^ 2 + ko.label_rate_se ^ 2 - 2 * f.f * coalesce(x.label_rate, 0) / f.nn AS label_rate,
               ca.mrr_all_se ^ 2 + ko.mrr_all_se ^ 2 - 2 * f.f * coalesce(x.mrr_all, 0) / f.nn AS mrr_all,
               ca.mrr_labelled_se ^ 2 + ko.mrr_labelled_se ^ 2 - 2 * f.fl * coalesce(x.mrr_labelled, 0) / f.nnl AS mrr_labelled,
               ca.mean_rank_se ^ 2 + ko.mean_rank_se ^ 2 - 2 * f.fl * coalesce(x.mean_rank, 0) / f.nnl AS mean_rank
    ) v
    WHERE ca.arm = 'candidate'
$$;


--
-- Name: toolgate_experiment_max_per_key(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_experiment_max_per_key() RETURNS integer
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT coalesce(nullif(current_setting('toolgate.experiment_max_per_key', true), '')::integer, 200)
$$;


--
-- Name: toolgate_experiment_units(bigint, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_experiment_units(experiment bigint, max_per_key integer) RETURNS TABLE(arm text, unit text, key_id bigint, principal text, capped boolean, searches bigint, n bigint, nl bigint, rr_sum double precision, rank_sum double precision)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    WITH per_search AS (
        SELECT l.arm, l.id, l.created_at, l.caller_key_id,
               coalesce('key:' || l.caller_key_id, 'caller:' || coalesce(l.caller, '')) AS principal,
               toolgate_ab_unit(e.unit, l.session_id, l.caller_key_id, l.caller) AS unit,
               -- a key whose row is gone counts as a search key
               (l.caller_key_id IS NOT NULL AND k.scope IS DISTINCT FROM 'admin') OR toolgate_token_search(l.caller) AS capped,
               (SELECT min(x.rank) FROM search_labels x
                WHERE x.search_id = l.id AND x.search_created_at = l.created_at) AS best_rank
        FROM search_log l
        JOIN profile_experiments e ON e.id = l.experiment_id
        LEFT JOIN api_keys k ON k.id = l.caller_key_id
        WHERE l.experiment_id = experiment AND l.arm IS NOT NULL
    ), counted AS (
        SELECT p.*,
               NOT p.capped OR row_number() OVER (PARTITION BY p.arm, p.principal, p.capped
                                                  ORDER BY p.created_at DESC, p.id DESC) <= max_per_key AS counted
        FROM per_search p
    )
    SELECT c.arm, c.unit, c.caller_key_id, c.principal, c.capped, count(*),
           count(*) FILTER (WHERE c.counted),
           count(c.best_rank) FILTER (WHERE c.counted),
           coalesce(sum(1.0::double precision / c.best_rank) FILTER (WHERE c.counted), 0),
           coalesce(sum(c.best_rank::double precision) FILTER (WHERE c.counted), 0)
    FROM counted c
    GROUP BY c.arm, c.unit, c.caller_key_id, c.principal, c.capped
$$;


--
-- Name: toolgate_feedback_label(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_feedback_label() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO search_labels (search_id, search_created_at, tool_name, label_source, rank, delay_ms,
                               tool_source, success, created_at)
    SELECT l.id, l.created_at, n.tool_name, 'feedback', r.pos,
           greatest(0, floor(extract(epoch FROM n.created_at - l.created_at) * 1000))::bigint,
           (SELECT s.name FROM tools t JOIN sources s ON s.id = t.source_id WHERE t.name = n.tool_name),
           n.success, n.created_at
    FROM new_rows n
    JOIN search_log l ON l.id = n.search_id
    CROSS JOIN LATERAL (
        SELECT e.pos FROM jsonb_array_elements(l.results) WITH ORDINALITY AS e (value, pos)
        WHERE e.value ->> 'name' = n.tool_name
        ORDER BY e.pos LIMIT 1
    ) r
    ON CONFLICT (search_id, tool_name, label_source) DO UPDATE
        SET success = EXCLUDED.success, created_at = EXCLUDED.created_at,
            delay_ms = EXCLUDED.delay_ms;
    RETURN NULL;
END $$;


--
-- Name: toolgate_field_vector(regconfig, text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_field_vector(cfg regconfig, idents text, prose text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT CASE WHEN cfg = 'english'::regconfig THEN toolgate_text_vector('english', idents || ' ' || prose)
                ELSE toolgate_text_vector('english', idents) || toolgate_text_vector(cfg, prose) END
$$;


--
-- Name: toolgate_field_weight(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_field_weight(label text) RETURNS real
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT CASE label WHEN 'A' THEN 3.0 WHEN 'B' THEN 2.0 WHEN 'C' THEN 1.0 ELSE 0.5 END::real
$$;


--
-- Name: toolgate_fuse(integer[], text[], integer[], bigint[], bigint[], double precision[], double precision[], text, double precision, double precision); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_fuse(grps integer[], branches text[], variants integer[], tool_ids bigint[], ranks bigint[], scores double precision[], weights double precision[], method text, k_rrf double precision, vec_confidence double precision) RETURNS TABLE(grp integer, tool_id bigint, score double precision, lexical_rank bigint, vector_rank bigint, bm25 double precision, lexical_share double precision, vector_share double precision, meaning_share double precision, lexical_texts integer[], vector_texts integer[])
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT s.grp, s.tool_id, sum(s.share),
           min(s.rank) FILTER (WHERE s.branch = 'l'), min(s.rank) FILTER (WHERE s.branch = 'v'),
           max(s.score) FILTER (WHERE s.branch = 'l'),
           sum(s.share) FILTER (WHERE s.branch = 'l'), sum(s.share) FILTER (WHERE s.branch = 'v'),
           sum(s.share) FILTER (WHERE s.branch = 'm'),
           array_agg(s.variant) FILTER (WHERE s.branch = 'l'), array_agg(s.variant) FILTER (WHERE s.branch = 'v')
    FROM (
        SELECT e.grp, e.tool_id, e.branch, e.variant, e.rank, e.score,
               toolgate_list_weight(e.branch, e.w, max(e.score) OVER l, vec_confidence)
               * toolgate_fusion_share(method, e.score, e.rank, count(*) OVER l, max(e.score) OVER l,
                                       min(e.score) OVER l, avg(e.score) OVER l, stddev_pop(e.score) OVER l,
                                       k_rrf) AS share
        FROM unnest(grps, branches, variants, tool_ids, ranks, scores, weights)
             AS e (grp, branch, variant, tool_id, rank, score, w)
        WINDOW l AS (PARTITION BY e.grp, e.branch, e.variant)
    ) s
    GROUP BY s.grp, s.tool_id
$$;


--
-- Name: toolgate_fusion_share(text, double precision, bigint, bigint, double precision, double precision, double precision, double precision, double precision); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_fusion_share(method text, score double precision, rank bigint, n bigint, mx double precision, mn double precision, mu double precision, sd double precision, k_rrf double precision) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT CASE method
               WHEN 'minmax' THEN CASE WHEN mx > mn THEN ((score - mn) * (n - 1) + (mx - mn)) / ((mx - mn) * n)
                                       ELSE 1 END
               WHEN 'dbsf' THEN CASE WHEN sd > 0 THEN (score - (mu - 3 * sd)) / (6 * sd) ELSE 0.5 END
               ELSE 1 / (k_rrf + rank)
           END
$$;


--
-- Name: toolgate_index_memories(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_index_memories() RETURNS boolean
    LANGUAGE plpgsql
    SET maintenance_work_mem TO '256MB'
    AS $$
DECLARE
    dims integer;
BEGIN
    IF to_regclass('tool_memories') IS NULL THEN
        RETURN false; -- a schema before migration 0035
    END IF;
    SELECT atttypmod INTO dims FROM pg_attribute WHERE attrelid = 'tool_memories'::regclass AND attname = 'embedding';
    IF dims IS NULL OR dims < 1 THEN
        RETURN false;
    END IF;
    IF to_regclass('tool_memories_tenant_list') IS NULL THEN
        IF dims <= 1024 THEN
            CREATE INDEX tool_memories_tenant_list ON tool_memories (tenant, list) INCLUDE (tool_id, embedding);
        ELSE
            CREATE INDEX tool_memories_tenant_list ON tool_memories (tenant, list);
        END IF;
    END IF;
    IF dims > 4000 THEN
        RETURN false;
    END IF;
    IF to_regclass('tool_memories_hnsw') IS NULL THEN
        CREATE INDEX tool_memories_hnsw ON tool_memories USING hnsw (embedding halfvec_cosine_ops)
            WITH (m = 16, ef_construction = 32);
    END IF;
    RETURN true;
END $$;


--
-- Name: toolgate_index_vector_partition(bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_index_vector_partition(p_set bigint) RETURNS boolean
    LANGUAGE plpgsql
    SET maintenance_work_mem TO '256MB'
    AS $$
DECLARE
    part regclass := to_regclass(toolgate_vector_partition(p_set));
    dims integer;
BEGIN
    IF part IS NULL THEN
        RETURN false;
    END IF;
    IF EXISTS (SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
               WHERE i.indrelid = part AND a.amname = 'hnsw') THEN
        RETURN true;
    END IF;
    SELECT atttypmod INTO dims FROM pg_attribute WHERE attrelid = 'tool_vectors'::regclass AND attname = 'embedding';
    IF dims IS NULL OR dims < 1 OR dims > 2000 THEN
        RETURN false;
    END IF;
    EXECUTE format('CREATE INDEX %I ON %I USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 32)',
                   toolgate_vector_partition(p_set) || '_hnsw', toolgate_vector_partition(p_set));
    RETURN true;
END $$;


--
-- Name: toolgate_latency_bucket(double precision); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_latency_bucket(ms double precision) RETURNS smallint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT CASE WHEN ms < 1 THEN 0 ELSE least(64, 1 + floor(4 * log(2, ms::numeric)))::smallint END
$$;


--
-- Name: toolgate_list_weight(text, double precision, double precision, double precision); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_list_weight(branch text, w double precision, mx double precision, vec_confidence double precision) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT CASE WHEN branch = 'v' AND vec_confidence > 0 THEN w * least(1, greatest(mx, 0) / vec_confidence)
                ELSE w END
$$;


--
-- Name: toolgate_memory_lists_action(text, integer, integer, integer, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_memory_lists_action(tenant text, memories integer, lists integer, listed integer, list_from integer) RETURNS text
    LANGUAGE sql STABLE
    AS $$
    SELECT CASE
        WHEN list_from > 0 AND memories >= list_from
             AND (lists = 0 OR memories >= 2 * listed OR 2 * memories <= listed) THEN 'make'
        WHEN lists > 0 AND (list_from = 0 OR memories < list_from) THEN 'drop'
        WHEN lists > 0 AND EXISTS (SELECT 1 FROM tool_memories m
                                   WHERE m.tenant = toolgate_memory_lists_action.tenant
                                     AND m.list = -1 AND m.embedding IS NOT NULL) THEN 'file'
    END
$$;


--
-- Name: toolgate_name_key(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_name_key(s text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
    SELECT btrim(lower(regexp_replace(
        regexp_replace(s, '([a-z0-9])([A-Z])', '\1 \2', 'g'),
        '[^A-Za-z0-9]+', ' ', 'g')))
$$;


--
-- Name: toolgate_name_words(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_name_words(key text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    AS $_$
DECLARE
    words  text[] := string_to_array(key, ' ');
    result text[] := '{}';
    run    text[] := '{}';
    w      text;
BEGIN
    -- an empty word at the end closes the last run
    FOREACH w IN ARRAY words || ''::text LOOP
        IF w ~ '^[a-z]{1,2}$' THEN
            run := run || w;
            CONTINUE;
        END IF;
        IF cardinality(run) >= 2 AND run[cardinality(run)] = 's' THEN
            -- the possessive's "s" stays apart
            run := run[1:cardinality(run) - 1];
            w := 's ' || w;
        END IF;
        IF cardinality(run) >= 2 AND EXISTS (SELECT 1 FROM unnest(run) r WHERE length(r) = 1 AND r NOT IN ('a', 'i')) THEN
            result := result || array_to_string(run, '');
        ELSE
            result := result || run;
        END IF;
        run := '{}';
        result := result || w;
    END LOOP;
    RETURN btrim(array_to_string(result, ' '));
END $_$;


--
-- Name: toolgate_query_lexemes(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_query_lexemes(txt text) RETURNS SETOF text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT toolgate_query_lexemes(txt, NULL)
$$;


--
-- Name: toolgate_query_lexemes(text, bigint[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_query_lexemes(txt text, seen bigint[]) RETURNS SETOF text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT DISTINCT u.lexeme
    FROM (SELECT 'english'::regconfig AS cfg
          UNION SELECT l.language::regconfig FROM search_languages l WHERE seen IS NULL
          UNION SELECT l.language::regconfig FROM search_source_languages l WHERE l.source_id = ANY (seen)) c
    CROSS JOIN LATERAL unnest(toolgate_text_vector(c.cfg, txt)) AS u (lexeme, positions, weights)
    WHERE c.cfg = 'english'::regconfig
       OR NOT EXISTS (SELECT 1 FROM search_stopwords s WHERE s.word = u.lexeme AND s.language = 'english')
$$;


--
-- Name: toolgate_retype_memories(integer, boolean); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_retype_memories(dims integer, keep boolean) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF to_regclass('tool_memories') IS NULL THEN
        RETURN;
    END IF;
    IF NOT keep THEN
        UPDATE tool_memories SET embedding = NULL WHERE embedding IS NOT NULL;
        IF to_regclass('tool_memory_lists') IS NOT NULL THEN
            DELETE FROM tool_memory_lists;
            UPDATE tool_memory_tenants SET lists = 0, listed = 0 WHERE lists > 0;
        END IF;
    END IF;
    DROP INDEX IF EXISTS tool_memories_hnsw, tool_memories_tenant_embedding, tool_memories_tenant_list;
    EXECUTE format('ALTER TABLE tool_memories ALTER COLUMN embedding TYPE halfvec(%s)', dims);
    PERFORM toolgate_index_memories();
END $$;


--
-- Name: toolgate_rule_words(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_rule_words(txt text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT array_remove(regexp_split_to_array(lower(coalesce(txt, '')), '[^[:alnum:]_]+'), '')
$$;


--
-- Name: toolgate_search_best_labels(timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_search_best_labels(from_ts timestamp with time zone, to_ts timestamp with time zone) RETURNS TABLE(search_id bigint, search_created_at timestamp with time zone, best integer)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT x.search_id, x.search_created_at, min(x.rank)
    FROM search_labels x
    WHERE x.search_created_at >= from_ts AND x.search_created_at < to_ts
    GROUP BY x.search_id, x.search_created_at
$$;


--
-- Name: toolgate_search_document(bigint[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_search_document(ids bigint[]) RETURNS TABLE(tool_id bigint, source_id bigint, lexemes text[], tfs real[], doc_len real, tags text[], name_keys text[], language text)
    LANGUAGE sql STABLE
    AS $$
    SELECT d.tool_id, d.source_id,
           coalesce(x.lexemes, '{}'), coalesce(x.tfs, '{}'), coalesce(x.len, 0),
           d.tags, d.name_keys, d.lang::text
    FROM (
        SELECT t.id AS tool_id, t.source_id, g.lang,
               setweight(toolgate_field_vector(g.lang, toolgate_name_words(toolgate_name_key(t.name)), coalesce(t.title, '')), 'A')
            || setweight(toolgate_text_vector(g.lang, coalesce(
                   (SELECT string_agg(c.text, ' ' ORDER BY c.kind, c.ordinal) FROM tool_components c
                    WHERE c.tool_id = t.id
                      AND c.kind IN ('question', 'observed', 'topics', 'profile_tags', 'profile_function')), '')), 'B')
            || setweight(toolgate_text_vector(g.lang, t.description || ' ' || coalesce(
                   (SELECT string_agg(c.text, ' ' ORDER BY c.ordinal) FROM tool_components c
                    WHERE c.tool_id = t.id AND c.kind = 'profile_when_to_use'), '')), 'C')
            || setweight(CASE WHEN g.lang = 'english'::regconfig
                              THEN toolgate_text_vector('english', coalesce(p.mixed, '') || gl.text)
                              ELSE toolgate_field_vector(g.lang, coalesce(p.keys, '') || gl.text, coalesce(p.descs, '')) END, 'D')
               AS doc,
               coalesce((SELECT array_agg(DISTINCT tag) FROM (
                   SELECT lower(btrim(x, E' \t\r\n"[]')) AS tag
                   FROM tool_components c, regexp_split_to_table(c.text, '[,;\n]') x
                   WHERE c.tool_id = t.id AND c.kind = 'profile_tags') s
                   WHERE tag <> ''), '{}') AS tags,
               ARRAY[toolgate_name_key(t.name), toolgate_name_key(t.original_name)] AS name_keys
        FROM tools t
        -- OFFSET 0: detected once per tool (a subquery pulled up would repeat the call at each use)
        CROSS JOIN LATERAL (SELECT toolgate_detect_language(coalesce(t.title, '') || ' ' || t.description) AS lang OFFSET 0) g
        -- the parameters: names and descriptions in schema order (mixed, an English document's
        -- field), or names and descriptions apart (keys in English, descs in the tool's language)
        CROSS JOIN LATERAL (
            SELECT string_agg(toolgate_name_key(p.key) || ' ' || coalesce(p.value ->> 'description', ''), ' ') AS mixed,
                   string_agg(toolgate_name_key(p.key), ' ') AS keys,
                   string_agg(coalesce(p.value ->> 'description', ''), ' ') AS descs
            FROM jsonb_each(CASE WHEN jsonb_typeof(t.input_schema -> 'properties') = 'object'
                                 THEN t.input_schema -> 'properties' ELSE '{}'::jsonb END) p) p
        -- English words added by the enrichment: the knowledge expansion of its key terms
        -- (internal/enrich/expansion.go) and the glosses of its Chinese words (gloss.go)
        CROSS JOIN LATERAL (
            SELECT coalesce(' ' || string_agg(c.text, ' ' ORDER BY c.kind, c.ordinal), '') AS text FROM tool_components c
            WHERE c.tool_id = t.id AND c.kind IN ('expansion', 'gloss')) gl
        WHERE t.id = ANY (ids) AND t.enabled AND t.review_state = 'approved'
    ) d
    CROSS JOIN LATERAL (
        SELECT array_agg(u.lexeme ORDER BY u.lexeme) AS lexemes, array_agg(u.tf ORDER BY u.lexeme) AS tfs,
               sum(u.tf)::real AS len
        FROM (SELECT v.lexeme, (SELECT sum(toolgate_field_weight(w)) FROM unnest(v.weights) w)::real AS tf
              FROM unnest(d.doc) v) u
    ) x
$$;


--
-- Name: toolgate_search_endpoint(text, text, text, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_search_endpoint(endpoint text, session_id text, caller text, caller_key_id bigint) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT coalesce(endpoint,
                    CASE WHEN session_id IS NOT NULL THEN 'unknown'
                         WHEN caller_key_id IS NULL AND caller = 'internal' THEN 'internal'
                         ELSE 'rest' END)
$$;


--
-- Name: toolgate_search_hourly(timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_search_hourly(since timestamp with time zone) RETURNS TABLE(hour timestamp with time zone, endpoint text, profile text, mode text, searches bigint, zero_result bigint, low_score bigint, labelled bigint, rr_sum double precision, low_confidence bigint, memory_helped bigint)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT r.hour, r.endpoint, r.profile, r.mode, r.searches, r.zero_result, r.low_score, r.labelled, r.rr_sum,
           r.low_confidence, r.memory_helped
    FROM search_rollup_hourly r
    WHERE r.hour >= since AND r.hour < (SELECT coalesce(s.through, '-infinity') FROM search_rollup_state s)
    UNION ALL
    SELECT h.* FROM toolgate_search_hourly_of(greatest(since, toolgate_search_rollup_through()), 'infinity') h
$$;


--
-- Name: toolgate_search_hourly_of(timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_search_hourly_of(from_ts timestamp with time zone, to_ts timestamp with time zone) RETURNS TABLE(hour timestamp with time zone, endpoint text, profile text, mode text, searches bigint, zero_result bigint, low_score bigint, labelled bigint, rr_sum double precision, low_confidence bigint, memory_helped bigint)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
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


--
-- Name: toolgate_search_id(bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_search_id(seq bigint) RETURNS bigint
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    AS $$
DECLARE
    secret text := (SELECT key FROM search_id_key);
    half   constant bigint := 67108863; -- 2^26 - 1
    l      bigint := (seq >> 26) & half;
    r      bigint := seq & half;
    t      bigint;
BEGIN
    FOR i IN 1..8 LOOP
        t := r;
        r := l # (('x' || left(md5(secret || ':' || i || ':' || r), 8))::bit(32)::bigint & half);
        l := t;
    END LOOP;
    RETURN (1::bigint << 52) | (l << 26) | r;
END $$;


--
-- Name: toolgate_search_index(integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_search_index(max_tools integer) RETURNS bigint[]
    LANGUAGE plpgsql
    AS $$
DECLARE
    ids bigint[];
BEGIN
    PERFORM pg_advisory_xact_lock(7250011);
    SELECT array_agg(DISTINCT q.tool_id) INTO ids
    FROM (SELECT tool_id FROM search_queue ORDER BY id LIMIT max_tools) q;
    IF ids IS NULL THEN
        RETURN '{}';
    END IF;
    -- every queued row of these tools: their changes committed before this statement, so
    -- the refresh below (later statements, later snapshots) sees them
    DELETE FROM search_queue WHERE tool_id = ANY (ids);
    PERFORM toolgate_search_refresh(ids);
    RETURN ids;
END $$;


--
-- Name: toolgate_search_latency(timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_search_latency(since timestamp with time zone) RETURNS TABLE(hour timestamp with time zone, endpoint text, bucket smallint, searches bigint)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT r.hour, r.endpoint, r.bucket, r.searches
    FROM search_rollup_latency r
    WHERE r.hour >= since AND r.hour < (SELECT coalesce(s.through, '-infinity') FROM search_rollup_state s)
    UNION ALL
    SELECT h.* FROM toolgate_search_latency_of(greatest(since, toolgate_search_rollup_through()), 'infinity') h
$$;


--
-- Name: toolgate_search_latency_of(timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_search_latency_of(from_ts timestamp with time zone, to_ts timestamp with time zone) RETURNS TABLE(hour timestamp with time zone, endpoint text, bucket smallint, searches bigint)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT date_trunc('hour', l.created_at, 'UTC'),
           toolgate_search_endpoint(l.endpoint, l.session_id, l.caller, l.caller_key_id),
           toolgate_latency_bucket(l.latency_ms), count(*)
    FROM search_log l
    WHERE l.created_at >= from_ts AND l.created_at < to_ts AND l.latency_ms IS NOT NULL
    GROUP BY 1, 2, 3
$$;


--
-- Name: toolgate_search_low_confidence(integer, boolean); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_search_low_confidence(result_count integer, no_good_match boolean) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT result_count > 0 AND coalesce(no_good_match, false)
$$;


--
-- Name: toolgate_search_low_of(timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_search_low_of(from_ts timestamp with time zone, to_ts timestamp with time zone) RETURNS TABLE(day date, query text, endpoint text, mode text, filters jsonb, searches bigint, top_score double precision, top_bm25 double precision, last_seen timestamp with time zone)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT (l.created_at AT TIME ZONE 'UTC')::date, l.query,
           toolgate_search_endpoint(l.endpoint, l.session_id, l.caller, l.caller_key_id), l.mode,
           jsonb_strip_nulls(l.filters), count(*), min(l.top_score),
           min(coalesce((l.results -> 0 ->> 'bm25')::float8, 0)), max(l.created_at)
    FROM search_log l
    WHERE l.created_at >= from_ts AND l.created_at < to_ts
      AND toolgate_search_low_score(l.mode, l.result_count, l.results, l.no_good_match)
    GROUP BY 1, 2, 3, 4, 5
$$;


--
-- Name: toolgate_search_low_score(text, integer, jsonb, boolean); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_search_low_score(mode text, result_count integer, results jsonb, no_good_match boolean) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $_$
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
$_$;


--
-- Name: toolgate_search_memory_helped(jsonb); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_search_memory_helped(results jsonb) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $_$
    SELECT results @? '$[*].memory_share ? (@ > 0)'
$_$;


--
-- Name: toolgate_search_profile(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_search_profile(profile text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT coalesce(profile, '(active)')
$$;


--
-- Name: toolgate_search_queries_of(timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_search_queries_of(from_ts timestamp with time zone, to_ts timestamp with time zone) RETURNS TABLE(day date, query text, searches bigint, zero_result bigint, last_seen timestamp with time zone)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT (l.created_at AT TIME ZONE 'UTC')::date, l.query, count(*), count(*) FILTER (WHERE l.result_count = 0),
           max(l.created_at)
    FROM search_log l
    WHERE l.created_at >= from_ts AND l.created_at < to_ts
    GROUP BY 1, 2
$$;


--
-- Name: toolgate_search_refresh(bigint[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_search_refresh(ids bigint[]) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    zeroed     text[];
    zeroed_lex text[];
    zeroed_src bigint[];
    avgdl      double precision;
BEGIN
    -- take back what the tools contributed
    WITH old AS (
        SELECT u.lexeme, d.source_id, count(*) AS n
        FROM search_docs d, unnest(d.lexemes) u (lexeme)
        WHERE d.tool_id = ANY (ids)
        GROUP BY u.lexeme, d.source_id
    ), dec AS (
        UPDATE search_lexemes l SET df = l.df - o.n
        FROM (SELECT old.lexeme, sum(old.n) AS n FROM old GROUP BY old.lexeme) o
        WHERE l.lexeme = o.lexeme
        RETURNING l.lexeme, l.df
    ), sdec AS (
        UPDATE search_source_lexemes l SET df = l.df - old.n
        FROM old WHERE l.lexeme = old.lexeme AND l.source_id = old.source_id
        RETURNING l.lexeme, l.source_id, l.df
    )
    SELECT (SELECT array_agg(dec.lexeme) FROM dec WHERE dec.df <= 0),
           s.lex, s.src
    INTO zeroed, zeroed_lex, zeroed_src
    FROM (SELECT array_agg(sdec.lexeme ORDER BY sdec.lexeme, sdec.source_id) AS lex,
                 array_agg(sdec.source_id ORDER BY sdec.lexeme, sdec.source_id) AS src
          FROM sdec WHERE sdec.df <= 0) s;
    WITH old AS (
        SELECT d.source_id, d.language, count(*) AS n FROM search_docs d WHERE d.tool_id = ANY (ids)
        GROUP BY d.source_id, d.language
    ), ldec AS (
        UPDATE search_source_languages l SET docs = l.docs - old.n
        FROM old WHERE l.source_id = old.source_id AND l.language = old.language
    )
    UPDATE search_languages l SET docs = l.docs - o.n
    FROM (SELECT old.language, sum(old.n) AS n FROM old GROUP BY old.language) o
    WHERE l.language = o.language;
    WITH gone AS (
        DELETE FROM search_docs WHERE tool_id = ANY (ids) RETURNING source_id, doc_len
    ), sgone AS (
        UPDATE search_source_corpus c SET docs = c.docs - g.n, total_len = c.total_len - g.len
        FROM (SELECT gone.source_id, count(*) AS n, sum(gone.doc_len::float8) AS len FROM gone GROUP BY gone.source_id) g
        WHERE c.source_id = g.source_id
    )
    UPDATE search_corpus
       SET docs = docs - (SELECT count(*) FROM gone),
           total_len = total_len - (SELECT coalesce(sum(doc_len), 0) FROM gone);
    DELETE FROM search_postings WHERE tool_id = ANY (ids);

    -- and add what they contribute now
    INSERT INTO search_docs (tool_id, source_id, lexemes, tfs, doc_len, tags, name_keys, language)
    SELECT * FROM toolgate_search_document(ids);
    INSERT INTO search_languages (language, docs)
    SELECT d.language, count(*) FROM search_docs d WHERE d.tool_id = ANY (ids) GROUP BY d.language
    ON CONFLICT (language) DO UPDATE SET docs = search_languages.docs + EXCLUDED.docs;
    DELETE FROM search_languages WHERE docs <= 0;
    INSERT INTO search_source_languages (source_id, language, docs)
    SELECT d.source_id, d.language, count(*) FROM search_docs d WHERE d.tool_id = ANY (ids) GROUP BY d.source_id, d.language
    ON CONFLICT (source_id, language) DO UPDATE SET docs = search_source_languages.docs + EXCLUDED.docs;
    DELETE FROM search_source_languages WHERE docs <= 0;
    UPDATE search_corpus
       SET docs = docs + s.n, total_len = total_len + s.len, name_words = greatest(name_words, s.words)
      FROM (SELECT count(*) AS n, coalesce(sum(doc_len), 0) AS len,
                   coalesce(max((SELECT max(cardinality(string_to_array(k, ' '))) FROM unnest(name_keys) k)), 0) AS words
            FROM search_docs WHERE tool_id = ANY (ids)) s;
    UPDATE search_corpus
       SET impact_avgdl = CASE WHEN docs > 0 THEN total_len / docs ELSE 0 END
     WHERE impact_avgdl = 0;
    SELECT CASE WHEN docs > 0 THEN total_len / docs ELSE 1 END INTO avgdl FROM search_corpus;
    INSERT INTO search_source_corpus (source_id, docs, total_len)
    SELECT d.source_id, count(*), sum(d.doc_len::float8) FROM search_docs d WHERE d.tool_id = ANY (ids) GROUP BY d.source_id
    ON CONFLICT (source_id) DO UPDATE
        SET docs = search_source_corpus.docs + EXCLUDED.docs, total_len = search_source_corpus.total_len + EXCLUDED.total_len;
    -- the sources no indexed tool has any more
    DELETE FROM search_source_corpus WHERE docs <= 0;

    PERFORM toolgate_search_write_postings(ids, avgdl);

    WITH new AS (
        SELECT u.lexeme, d.source_id, count(*) AS n
        FROM search_docs d, unnest(d.lexemes) u (lexeme)
        WHERE d.tool_id = ANY (ids)
        GROUP BY u.lexeme, d.source_id
    ), sinc AS (
        INSERT INTO search_source_lexemes (lexeme, source_id, df)
        SELECT new.lexeme, new.source_id, new.n FROM new
        ON CONFLICT (lexeme, source_id) DO UPDATE SET df = search_source_lexemes.df + EXCLUDED.df
    )
    INSERT INTO search_lexemes (lexeme, df)
    SELECT new.lexeme, sum(new.n) FROM new GROUP BY new.lexeme
    ON CONFLICT (lexeme) DO UPDATE SET df = search_lexemes.df + EXCLUDED.df;
    -- the lexemes no document has any more, corpus-wide and in a source
    IF zeroed IS NOT NULL THEN
        DELETE FROM search_lexemes WHERE lexeme = ANY (zeroed) AND df <= 0;
    END IF;
    IF zeroed_lex IS NOT NULL THEN
        DELETE FROM search_source_lexemes l
        USING unnest(zeroed_lex, zeroed_src) AS z (lexeme, source_id)
        WHERE l.lexeme = z.lexeme AND l.source_id = z.source_id AND l.df <= 0;
    END IF;
END $$;


--
-- Name: toolgate_search_reimpact(bigint, integer, double precision); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_search_reimpact(after_id bigint, n integer, avgdl double precision) RETURNS bigint
    LANGUAGE plpgsql
    AS $$
DECLARE
    ids bigint[];
BEGIN
    PERFORM pg_advisory_xact_lock(7250011);
    SELECT array_agg(tool_id ORDER BY tool_id) INTO ids
    FROM (SELECT tool_id FROM search_docs WHERE tool_id > after_id ORDER BY tool_id LIMIT n) d;
    IF ids IS NULL THEN
        RETURN NULL;
    END IF;
    DELETE FROM search_postings WHERE tool_id = ANY (ids);
    PERFORM toolgate_search_write_postings(ids, avgdl);
    RETURN ids[cardinality(ids)];
END $$;


--
-- Name: toolgate_search_rollup_rules(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_search_rollup_rules() RETURNS text
    LANGUAGE sql STABLE
    AS $$
    SELECT md5(string_agg(pg_get_functiondef(p.oid), E'\n' ORDER BY p.proname))
    FROM pg_proc p
    WHERE p.pronamespace = to_regnamespace(current_schema())
      AND p.proname IN ('toolgate_search_endpoint', 'toolgate_search_profile', 'toolgate_search_low_score',
                        'toolgate_search_low_confidence', 'toolgate_search_memory_helped',
                        'toolgate_search_best_labels', 'toolgate_search_hourly_of', 'toolgate_search_tenants_of', 'toolgate_search_queries_of', 'toolgate_search_zero_of',
                        'toolgate_search_low_of', 'toolgate_search_tools_of',
                        'toolgate_search_slowest_of', 'toolgate_latency_bucket', 'toolgate_search_latency_of')
$$;


--
-- Name: toolgate_search_rollup_step(integer, interval); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_search_rollup_step(max_hours integer, lag interval, OUT rolled_through timestamp with time zone, OUT hours_rolled integer, OUT hours_relabelled integer, OUT caught_up boolean) RETURNS record
    LANGUAGE plpgsql
    SET work_mem TO '64MB'
    SET jit TO 'off'
    AS $$
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


--
-- Name: toolgate_search_rollup_through(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_search_rollup_through() RETURNS timestamp with time zone
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT coalesce((SELECT s.through FROM search_rollup_state s), '-infinity')
$$;


--
-- Name: toolgate_search_rules(text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_search_rules(query text, tenant text) RETURNS TABLE(id bigint, action text, tool text, boost double precision, "position" integer)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    WITH q AS (SELECT toolgate_rule_words(query) AS words)
    SELECT r.id, r.action, r.tool, r.boost, r.position
    FROM search_rules r, q
    WHERE (r.tenant IS NULL OR r.tenant = toolgate_search_rules.tenant)
      AND cardinality(q.words) > 0
      AND CASE r.match WHEN 'exact' THEN toolgate_rule_words(r.pattern) = q.words
                       ELSE q.words @> toolgate_rule_words(r.pattern) END
$$;


--
-- Name: toolgate_search_slowest_of(timestamp with time zone, timestamp with time zone, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_search_slowest_of(from_ts timestamp with time zone, to_ts timestamp with time zone, n integer) RETURNS TABLE(day date, search_id bigint, created_at timestamp with time zone, latency_ms double precision)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
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


--
-- Name: toolgate_search_tenants(timestamp with time zone, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_search_tenants(since timestamp with time zone, want text) RETURNS TABLE(hour timestamp with time zone, tenant text, searches bigint, memory_helped bigint, labelled bigint, hit_1 bigint, hit_5 bigint)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT r.hour, r.tenant, r.searches, r.memory_helped, r.labelled, r.hit_1, r.hit_5
    FROM search_rollup_tenants r
    WHERE (want IS NULL OR r.tenant = want)
      AND r.hour >= since AND r.hour < (SELECT coalesce(s.through, '-infinity') FROM search_rollup_state s)
    UNION ALL
    SELECT t.* FROM toolgate_search_tenants_of(greatest(since, toolgate_search_rollup_through()), 'infinity') t
    WHERE want IS NULL OR t.tenant = want
$$;


--
-- Name: toolgate_search_tenants_of(timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_search_tenants_of(from_ts timestamp with time zone, to_ts timestamp with time zone) RETURNS TABLE(hour timestamp with time zone, tenant text, searches bigint, memory_helped bigint, labelled bigint, hit_1 bigint, hit_5 bigint)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT date_trunc('hour', l.created_at, 'UTC'), l.tenant, count(*),
           count(*) FILTER (WHERE toolgate_search_memory_helped(l.results)),
           count(b.best), count(*) FILTER (WHERE b.best = 1), count(*) FILTER (WHERE b.best <= 5)
    FROM search_log l
    LEFT JOIN toolgate_search_best_labels(from_ts, to_ts) b ON b.search_id = l.id AND b.search_created_at = l.created_at
    WHERE l.created_at >= from_ts AND l.created_at < to_ts AND l.tenant IS NOT NULL
    GROUP BY 1, 2
$$;


--
-- Name: toolgate_search_tool_labels(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_search_tool_labels() RETURNS TABLE(tool_name text, called bigint, succeeded bigint)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT x.tool_name, count(DISTINCT x.search_id), count(DISTINCT x.search_id) FILTER (WHERE x.success)
    FROM search_labels x
    GROUP BY 1
$$;


--
-- Name: toolgate_search_tools_of(timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_search_tools_of(from_ts timestamp with time zone, to_ts timestamp with time zone) RETURNS TABLE(month date, tool_name text, returned bigint, returned_first bigint)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT date_trunc('month', l.created_at AT TIME ZONE 'UTC')::date, r.value ->> 'name',
           count(*), count(*) FILTER (WHERE r.pos = 1)
    FROM search_log l
    CROSS JOIN LATERAL jsonb_array_elements(l.results) WITH ORDINALITY AS r (value, pos)
    WHERE l.created_at >= from_ts AND l.created_at < to_ts
    GROUP BY 1, 2
$$;


--
-- Name: toolgate_search_write_postings(bigint[], double precision); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_search_write_postings(ids bigint[], avgdl double precision) RETURNS void
    LANGUAGE sql
    AS $$
    INSERT INTO search_postings (lexeme, tool_id, source_id, impact)
    SELECT u.lexeme, d.tool_id, d.source_id, toolgate_bm25_impact(u.tf, d.doc_len, avgdl)
    FROM search_docs d, unnest(d.lexemes, d.tfs) u (lexeme, tf)
    WHERE d.tool_id = ANY (ids)
$$;


--
-- Name: toolgate_search_zero_of(timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_search_zero_of(from_ts timestamp with time zone, to_ts timestamp with time zone) RETURNS TABLE(day date, query text, endpoint text, filters jsonb, searches bigint, last_seen timestamp with time zone)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT (l.created_at AT TIME ZONE 'UTC')::date, l.query,
           toolgate_search_endpoint(l.endpoint, l.session_id, l.caller, l.caller_key_id),
           jsonb_strip_nulls(l.filters), count(*), max(l.created_at)
    FROM search_log l
    WHERE l.created_at >= from_ts AND l.created_at < to_ts AND l.result_count = 0
    GROUP BY 1, 2, 3, 4
$$;


--
-- Name: toolgate_teaching_searches(bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_teaching_searches(tool bigint) RETURNS TABLE(id bigint, created_at timestamp with time zone, labelled_at timestamp with time zone, key_id bigint, operator boolean, tenant text, text text)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
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


--
-- Name: toolgate_text_vector(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_text_vector(txt text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT toolgate_text_vector('english', txt)
$$;


--
-- Name: toolgate_text_vector(regconfig, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_text_vector(cfg regconfig, txt text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT ts_delete(to_tsvector(cfg, regexp_replace(txt, '\m([[:alpha:]]{1,3})&([[:alpha:]]{1,3})\M', '\1\2', 'g')),
                     '{inc,corp,ltd,llc,llp,plc,gmbh,sarl,s.a,s.a.s,s.l,s.p.a,s.r.l,n.v,b.v,k.k}'::text[])
        || to_tsvector('simple', toolgate_cjk_bigrams(txt))
$$;


--
-- Name: toolgate_token_search(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_token_search(caller text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT coalesce(caller, '') LIKE 'oauth:%'
$$;


--
-- Name: toolgate_tools_search_queue(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_tools_search_queue() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO search_queue (tool_id) SELECT id FROM new_rows;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO search_queue (tool_id) SELECT id FROM old_rows;
    ELSE
        INSERT INTO search_queue (tool_id)
        SELECT n.id FROM new_rows n JOIN old_rows o ON o.id = n.id
        WHERE (n.name, n.original_name, n.title, n.description, n.input_schema, n.enabled, n.review_state, n.source_id)
              IS DISTINCT FROM
              (o.name, o.original_name, o.title, o.description, o.input_schema, o.enabled, o.review_state, o.source_id);
    END IF;
    RETURN NULL;
END $$;


--
-- Name: toolgate_unit_memory(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_unit_memory() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'INSERT' OR NEW.embedding IS DISTINCT FROM OLD.embedding THEN
        IF NEW.embedding IS NOT NULL THEN
            NEW.embedding := l2_normalize(NEW.embedding);
        END IF;
        NEW.list := -1;
    END IF;
    RETURN NEW;
END $$;


--
-- Name: toolgate_vector_partition(bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_vector_partition(set_id bigint) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT 'tool_vectors_s' || set_id $$;


--
-- Name: toolgate_vector_sets_defer_index(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_vector_sets_defer_index() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NEW.state = 'ready' AND NOT EXISTS (SELECT 1 FROM weight_profiles p WHERE p.id = NEW.profile_id AND p.is_active) THEN
        NEW.index_deferred := true;
    END IF;
    RETURN NEW;
END $$;


--
-- Name: toolgate_vector_sets_partition(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_vector_sets_partition() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM toolgate_create_vector_partition(NEW.id);
        IF NEW.state = 'ready' AND NOT NEW.index_deferred THEN
            PERFORM toolgate_index_vector_partition(NEW.id);
        END IF;
        RETURN NEW;
    END IF;
    PERFORM toolgate_drop_vector_partition(OLD.id);
    RETURN OLD;
END $$;


--
-- Name: toolgate_with_synonyms(text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.toolgate_with_synonyms(txt text, tenant text) RETURNS text
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    AS $$
DECLARE
    extra text;
BEGIN
    SELECT string_agg(DISTINCT syn, ' ') INTO extra
    FROM search_synonyms s
    CROSS JOIN LATERAL unnest(s.synonyms) AS syn
    WHERE s.word = ANY (toolgate_rule_words(txt))
      AND (s.tenant IS NULL OR s.tenant = toolgate_with_synonyms.tenant);
    RETURN CASE WHEN extra IS NULL THEN txt ELSE txt || ' ' || extra END;
END $$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: api_key_rate; Type: TABLE; Schema: public; Owner: -
--

CREATE UNLOGGED TABLE public.api_key_rate (
    key_id bigint NOT NULL,
    window_start timestamp with time zone NOT NULL,
    hits integer NOT NULL
);


--
-- Name: api_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.api_keys (
    id bigint NOT NULL,
    name text NOT NULL,
    prefix text NOT NULL,
    secret_hash bytea NOT NULL,
    scope text NOT NULL,
    sources text[],
    rate_per_min integer,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    revoked_at timestamp with time zone,
    last_used_at timestamp with time zone,
    plan text,
    tenant text,
    CONSTRAINT api_keys_admin_every_source CHECK (((scope <> 'admin'::text) OR (sources IS NULL))),
    CONSTRAINT api_keys_plan_check CHECK ((plan = ANY (ARRAY['none'::text, 'rewrite'::text, 'decompose'::text, 'full'::text]))),
    CONSTRAINT api_keys_rate_per_min_check CHECK (((rate_per_min IS NULL) OR (rate_per_min > 0))),
    CONSTRAINT api_keys_scope_check CHECK ((scope = ANY (ARRAY['search'::text, 'admin'::text]))),
    CONSTRAINT api_keys_tenant_check CHECK (((tenant IS NULL) OR (tenant ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$'::text)))
);


--
-- Name: api_keys_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.api_keys ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.api_keys_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: embedding_space; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.embedding_space (
    singleton boolean DEFAULT true NOT NULL,
    model text NOT NULL,
    dims integer NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT embedding_space_dims_check CHECK (((dims > 0) AND (dims <= 16000))),
    CONSTRAINT embedding_space_singleton_check CHECK (singleton)
);


--
-- Name: mcp_session_tools; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.mcp_session_tools (
    session_id text NOT NULL,
    tool_name text NOT NULL,
    bound_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL
);


--
-- Name: mcp_sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.mcp_sessions (
    id text NOT NULL,
    caller text NOT NULL,
    sources text[],
    state jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_seen_at timestamp with time zone DEFAULT now() NOT NULL,
    caller_key_id bigint
);


--
-- Name: memory_sweep; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.memory_sweep (
    singleton boolean DEFAULT true NOT NULL,
    labels_until timestamp with time zone DEFAULT '1970-01-01 00:00:00+00'::timestamp with time zone NOT NULL,
    sweeping_until timestamp with time zone,
    after_tool bigint DEFAULT 0 NOT NULL,
    min_keys integer,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT memory_sweep_min_keys_check CHECK ((min_keys > 0)),
    CONSTRAINT memory_sweep_singleton_check CHECK (singleton)
);


--
-- Name: oauth_subject_rate; Type: TABLE; Schema: public; Owner: -
--

CREATE UNLOGGED TABLE public.oauth_subject_rate (
    subject text NOT NULL,
    window_start timestamp with time zone NOT NULL,
    hits integer NOT NULL
);


--
-- Name: observed_query_forgets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.observed_query_forgets (
    source_id bigint NOT NULL,
    forgotten_at timestamp with time zone NOT NULL
);


--
-- Name: observed_query_sweep; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.observed_query_sweep (
    singleton boolean DEFAULT true NOT NULL,
    labels_until timestamp with time zone DEFAULT '1970-01-01 00:00:00+00'::timestamp with time zone NOT NULL,
    sweeping_until timestamp with time zone,
    after_tool bigint DEFAULT 0 NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    min_keys integer,
    CONSTRAINT observed_query_sweep_min_keys_check CHECK ((min_keys > 0)),
    CONSTRAINT observed_query_sweep_singleton_check CHECK (singleton)
);


--
-- Name: profile_experiments; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.profile_experiments (
    id bigint NOT NULL,
    name text NOT NULL,
    control_profile_id bigint,
    candidate_profile_id bigint,
    control_profile text NOT NULL,
    candidate_profile text NOT NULL,
    share double precision NOT NULL,
    unit text NOT NULL,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    stopped_at timestamp with time zone,
    CONSTRAINT profile_experiments_check CHECK ((candidate_profile <> control_profile)),
    CONSTRAINT profile_experiments_check1 CHECK (((stopped_at IS NOT NULL) OR ((control_profile_id IS NOT NULL) AND (candidate_profile_id IS NOT NULL)))),
    CONSTRAINT profile_experiments_check2 CHECK (((stopped_at IS NULL) OR (stopped_at >= started_at))),
    CONSTRAINT profile_experiments_name_check CHECK ((name ~ '^[a-z0-9][a-z0-9_.-]{0,63}$'::text)),
    CONSTRAINT profile_experiments_share_check CHECK (((share > (0)::double precision) AND (share < (1)::double precision))),
    CONSTRAINT profile_experiments_unit_check CHECK ((unit = ANY (ARRAY['session'::text, 'key'::text])))
);


--
-- Name: profile_experiment_arms; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.profile_experiment_arms AS
 SELECT e.id AS experiment_id,
    e.name AS experiment,
    a.arm,
        CASE a.arm
            WHEN 'candidate'::text THEN e.candidate_profile
            ELSE e.control_profile
        END AS profile,
    a.units,
    a.keys,
    a.clusters,
    a.rank_clusters,
    a.searches,
    a.counted,
    a.labelled,
    a.top_unit,
    a.top_unit_searches,
    a.top_key_id,
    a.top_key,
    a.top_key_searches,
    a.label_rate,
    a.label_rate_se,
    (a.label_rate - ((1.96)::double precision * a.label_rate_se)) AS label_rate_lo,
    (a.label_rate + ((1.96)::double precision * a.label_rate_se)) AS label_rate_hi,
    a.mrr_all,
    a.mrr_all_se,
    (a.mrr_all - ((1.96)::double precision * a.mrr_all_se)) AS mrr_all_lo,
    (a.mrr_all + ((1.96)::double precision * a.mrr_all_se)) AS mrr_all_hi,
    a.mrr_labelled,
    a.mrr_labelled_se,
    (a.mrr_labelled - ((1.96)::double precision * a.mrr_labelled_se)) AS mrr_labelled_lo,
    (a.mrr_labelled + ((1.96)::double precision * a.mrr_labelled_se)) AS mrr_labelled_hi,
    a.mean_rank,
    a.mean_rank_se,
    (a.mean_rank - ((1.96)::double precision * a.mean_rank_se)) AS mean_rank_lo,
    (a.mean_rank + ((1.96)::double precision * a.mean_rank_se)) AS mean_rank_hi
   FROM (public.profile_experiments e
     CROSS JOIN LATERAL public.toolgate_experiment_arms(e.id, public.toolgate_experiment_max_per_key()) a(arm, units, keys, clusters, rank_clusters, searches, counted, labelled, top_unit, top_unit_searches, top_key_id, top_key, top_key_searches, label_rate, label_rate_se, mrr_all, mrr_all_se, mrr_labelled, mrr_labelled_se, mean_rank, mean_rank_se));


--
-- Name: profile_experiment_comparison; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.profile_experiment_comparison AS
 SELECT e.id AS experiment_id,
    e.name AS experiment,
    e.control_profile AS control,
    e.candidate_profile AS candidate,
    d.control_searches,
    d.candidate_searches,
    d.label_rate_diff,
    d.label_rate_diff_se,
    (d.label_rate_diff - ((1.96)::double precision * d.label_rate_diff_se)) AS label_rate_diff_lo,
    (d.label_rate_diff + ((1.96)::double precision * d.label_rate_diff_se)) AS label_rate_diff_hi,
    d.mrr_all_diff,
    d.mrr_all_diff_se,
    (d.mrr_all_diff - ((1.96)::double precision * d.mrr_all_diff_se)) AS mrr_all_diff_lo,
    (d.mrr_all_diff + ((1.96)::double precision * d.mrr_all_diff_se)) AS mrr_all_diff_hi,
    d.mrr_labelled_diff,
    d.mrr_labelled_diff_se,
    (d.mrr_labelled_diff - ((1.96)::double precision * d.mrr_labelled_diff_se)) AS mrr_labelled_diff_lo,
    (d.mrr_labelled_diff + ((1.96)::double precision * d.mrr_labelled_diff_se)) AS mrr_labelled_diff_hi,
    d.mean_rank_diff,
    d.mean_rank_diff_se,
    (d.mean_rank_diff - ((1.96)::double precision * d.mean_rank_diff_se)) AS mean_rank_diff_lo,
    (d.mean_rank_diff + ((1.96)::double precision * d.mean_rank_diff_se)) AS mean_rank_diff_hi
   FROM (public.profile_experiments e
     CROSS JOIN LATERAL public.toolgate_experiment_comparison(e.id, public.toolgate_experiment_max_per_key()) d(control_searches, candidate_searches, label_rate_diff, label_rate_diff_se, mrr_all_diff, mrr_all_diff_se, mrr_labelled_diff, mrr_labelled_diff_se, mean_rank_diff, mean_rank_diff_se));


--
-- Name: profile_experiments_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.profile_experiments ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.profile_experiments_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: profile_tunes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.profile_tunes (
    id bigint NOT NULL,
    profile text NOT NULL,
    baseline text NOT NULL,
    state text DEFAULT 'queued'::text NOT NULL,
    phase text,
    done integer DEFAULT 0 NOT NULL,
    total integer DEFAULT 0 NOT NULL,
    options jsonb DEFAULT '{}'::jsonb NOT NULL,
    result jsonb,
    error text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    CONSTRAINT profile_tunes_profile_check CHECK ((profile ~ '^[a-z0-9][a-z0-9_.-]{0,63}$'::text)),
    CONSTRAINT profile_tunes_state_check CHECK ((state = ANY (ARRAY['queued'::text, 'running'::text, 'succeeded'::text, 'failed'::text])))
);


--
-- Name: profile_tunes_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.profile_tunes_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: profile_tunes_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.profile_tunes_id_seq OWNED BY public.profile_tunes.id;


--
-- Name: river_job; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.river_job (
    id bigint NOT NULL,
    state public.river_job_state DEFAULT 'available'::public.river_job_state NOT NULL,
    attempt smallint DEFAULT 0 NOT NULL,
    max_attempts smallint DEFAULT 25 NOT NULL,
    attempted_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    finalized_at timestamp with time zone,
    scheduled_at timestamp with time zone DEFAULT now() NOT NULL,
    priority smallint DEFAULT 1 NOT NULL,
    args jsonb NOT NULL,
    attempted_by text[],
    errors jsonb[],
    kind text NOT NULL,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    queue text DEFAULT 'default'::text NOT NULL,
    tags character varying(255)[] DEFAULT '{}'::character varying[] NOT NULL,
    unique_key bytea,
    unique_states bit(8),
    CONSTRAINT finalized_or_finalized_at_null CHECK ((((finalized_at IS NULL) AND (state <> ALL (ARRAY['cancelled'::public.river_job_state, 'completed'::public.river_job_state, 'discarded'::public.river_job_state]))) OR ((finalized_at IS NOT NULL) AND (state = ANY (ARRAY['cancelled'::public.river_job_state, 'completed'::public.river_job_state, 'discarded'::public.river_job_state]))))),
    CONSTRAINT kind_length CHECK (((char_length(kind) > 0) AND (char_length(kind) < 128))),
    CONSTRAINT max_attempts_is_positive CHECK ((max_attempts > 0)),
    CONSTRAINT priority_in_range CHECK (((priority >= 1) AND (priority <= 4))),
    CONSTRAINT queue_length CHECK (((char_length(queue) > 0) AND (char_length(queue) < 128)))
);


--
-- Name: river_job_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.river_job_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: river_job_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.river_job_id_seq OWNED BY public.river_job.id;


--
-- Name: river_leader; Type: TABLE; Schema: public; Owner: -
--

CREATE UNLOGGED TABLE public.river_leader (
    elected_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    leader_id text NOT NULL,
    name text DEFAULT 'default'::text NOT NULL,
    CONSTRAINT leader_id_length CHECK (((char_length(leader_id) > 0) AND (char_length(leader_id) < 128))),
    CONSTRAINT name_length CHECK ((name = 'default'::text))
);


--
-- Name: river_migration; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.river_migration (
    line text NOT NULL,
    version bigint NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT line_length CHECK (((char_length(line) > 0) AND (char_length(line) < 128))),
    CONSTRAINT version_gte_1 CHECK ((version >= 1))
);


--
-- Name: river_notification; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.river_notification (
    id bigint NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    payload text NOT NULL,
    topic text NOT NULL,
    CONSTRAINT topic_length CHECK (((length(topic) > 0) AND (length(topic) < 128)))
);


--
-- Name: river_notification_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.river_notification_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: river_notification_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.river_notification_id_seq OWNED BY public.river_notification.id;


--
-- Name: river_queue; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.river_queue (
    name text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    paused_at timestamp with time zone,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL
);


--
-- Name: schema_functions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schema_functions (
    file text NOT NULL,
    sha256 text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: schema_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schema_migrations (
    version bigint NOT NULL,
    dirty boolean NOT NULL
);


--
-- Name: search_corpus; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_corpus (
    singleton boolean DEFAULT true NOT NULL,
    docs bigint NOT NULL,
    total_len double precision NOT NULL,
    impact_avgdl double precision DEFAULT 0 NOT NULL,
    name_words integer DEFAULT 0 NOT NULL,
    CONSTRAINT search_corpus_singleton_check CHECK (singleton)
);


--
-- Name: search_log_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.search_log_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: search_log; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_log (
    id bigint DEFAULT public.toolgate_search_id(nextval('public.search_log_id_seq'::regclass)) NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    query text NOT NULL,
    variants text[] DEFAULT '{}'::text[] NOT NULL,
    mode text NOT NULL,
    k integer NOT NULL,
    filters jsonb DEFAULT '{}'::jsonb NOT NULL,
    profile text,
    format text,
    plan jsonb,
    rerank jsonb,
    results jsonb DEFAULT '[]'::jsonb NOT NULL,
    result_count integer DEFAULT 0 NOT NULL,
    top_score double precision,
    latency_ms double precision,
    timings jsonb,
    caller text,
    session_id text,
    caller_key_id bigint,
    experiment_id bigint,
    arm text,
    endpoint text,
    confidence double precision,
    no_good_match boolean,
    tenant text
)
PARTITION BY RANGE (created_at);


--
-- Name: search_daily; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.search_daily AS
 SELECT ((search_log.created_at AT TIME ZONE 'UTC'::text))::date AS day,
    count(*) AS searches,
    count(*) FILTER (WHERE (search_log.result_count = 0)) AS zero_result,
    round(avg(search_log.result_count), 1) AS avg_results,
    round((percentile_cont((0.50)::double precision) WITHIN GROUP (ORDER BY search_log.latency_ms))::numeric, 2) AS p50_ms,
    round((percentile_cont((0.95)::double precision) WITHIN GROUP (ORDER BY search_log.latency_ms))::numeric, 2) AS p95_ms,
    round((percentile_cont((0.99)::double precision) WITHIN GROUP (ORDER BY search_log.latency_ms))::numeric, 2) AS p99_ms,
    round((max(search_log.latency_ms))::numeric, 2) AS max_ms,
    count(*) FILTER (WHERE (public.toolgate_search_endpoint(search_log.endpoint, search_log.session_id, search_log.caller, search_log.caller_key_id) = 'rest'::text)) AS rest,
    count(*) FILTER (WHERE (public.toolgate_search_endpoint(search_log.endpoint, search_log.session_id, search_log.caller, search_log.caller_key_id) = 'find_tools'::text)) AS find_tools,
    count(*) FILTER (WHERE public.toolgate_search_low_score(search_log.mode, search_log.result_count, search_log.results, search_log.no_good_match)) AS low_score,
    count(*) FILTER (WHERE public.toolgate_search_low_confidence(search_log.result_count, search_log.no_good_match)) AS low_confidence
   FROM public.search_log
  GROUP BY (((search_log.created_at AT TIME ZONE 'UTC'::text))::date);


--
-- Name: search_docs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_docs (
    tool_id bigint NOT NULL,
    source_id bigint NOT NULL,
    doc_len real NOT NULL,
    tags text[] DEFAULT '{}'::text[] NOT NULL,
    name_keys text[] NOT NULL,
    lexemes text[] NOT NULL,
    tfs real[] NOT NULL,
    language text DEFAULT 'english'::text NOT NULL
);


--
-- Name: search_feedback; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_feedback (
    id bigint NOT NULL,
    search_id bigint NOT NULL,
    tool_name text NOT NULL,
    success boolean,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: search_feedback_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.search_feedback ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.search_feedback_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: search_id_key; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_id_key (
    only_row boolean DEFAULT true NOT NULL,
    key text NOT NULL,
    CONSTRAINT search_id_key_only_row_check CHECK (only_row)
);


--
-- Name: search_labels; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_labels (
    search_id bigint NOT NULL,
    search_created_at timestamp with time zone NOT NULL,
    tool_name text NOT NULL,
    label_source text NOT NULL,
    rank integer NOT NULL,
    delay_ms bigint NOT NULL,
    tool_source text,
    success boolean,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT search_labels_delay_ms_check CHECK ((delay_ms >= 0)),
    CONSTRAINT search_labels_label_source_check CHECK ((label_source = ANY (ARRAY['call'::text, 'feedback'::text]))),
    CONSTRAINT search_labels_rank_check CHECK ((rank >= 1))
);


--
-- Name: search_label_stats; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.search_label_stats AS
 WITH searches AS (
         SELECT ((search_log.created_at AT TIME ZONE 'UTC'::text))::date AS day,
            public.toolgate_search_profile(search_log.profile) AS profile,
            count(*) AS searches
           FROM public.search_log
          GROUP BY (((search_log.created_at AT TIME ZONE 'UTC'::text))::date), (public.toolgate_search_profile(search_log.profile))
        ), labels AS (
         SELECT ((l.created_at AT TIME ZONE 'UTC'::text))::date AS day,
            public.toolgate_search_profile(l.profile) AS profile,
            COALESCE(x.label_source, 'any'::text) AS label_source,
            count(DISTINCT x.search_id) AS labelled,
            count(*) AS labels,
            avg(x.rank) AS mean_rank,
            percentile_cont((0.5)::double precision) WITHIN GROUP (ORDER BY ((x.rank)::double precision)) AS median_rank,
            avg((1.0 / (x.rank)::numeric)) AS mrr,
            percentile_cont((0.5)::double precision) WITHIN GROUP (ORDER BY ((x.delay_ms)::double precision)) AS median_delay_ms
           FROM (public.search_labels x
             JOIN public.search_log l ON (((l.id = x.search_id) AND (l.created_at = x.search_created_at))))
          GROUP BY GROUPING SETS (((((l.created_at AT TIME ZONE 'UTC'::text))::date), (public.toolgate_search_profile(l.profile)), x.label_source), ((((l.created_at AT TIME ZONE 'UTC'::text))::date), (public.toolgate_search_profile(l.profile))))
        )
 SELECT s.day,
    s.profile,
    b.label_source,
    s.searches,
    b.labelled,
    round(((b.labelled)::numeric / (s.searches)::numeric), 4) AS label_rate,
    b.labels,
    round(b.mean_rank, 2) AS mean_rank,
    round((b.median_rank)::numeric, 1) AS median_rank,
    round(b.mrr, 4) AS mrr,
    round((b.median_delay_ms)::numeric) AS median_delay_ms
   FROM (searches s
     JOIN labels b ON (((b.day = s.day) AND (b.profile = s.profile))));


--
-- Name: search_languages; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_languages (
    language text NOT NULL,
    docs bigint NOT NULL
);


--
-- Name: search_latency_hourly; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.search_latency_hourly AS
 SELECT l.start AS hour,
    l.searches,
    l.p50_ms,
    l.p95_ms,
    l.p99_ms
   FROM public.toolgate_analytics_latency('-infinity'::timestamp with time zone, 'hour'::text, NULL::text) l(start, searches, p50_ms, p95_ms, p99_ms);


--
-- Name: search_learning_daily; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.search_learning_daily AS
 SELECT l.day,
    l.searches,
    l.memory_helped,
    l.labelled,
    l.hit_1,
    l.hit_5,
    l.memories
   FROM public.toolgate_analytics_learning(COALESCE(( SELECT min(search_log.created_at) AS min
           FROM public.search_log), now()), NULL::text) l(day, searches, memory_helped, labelled, hit_1, hit_5, memories);


--
-- Name: search_lexemes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_lexemes (
    lexeme text NOT NULL,
    df integer NOT NULL,
    CONSTRAINT search_lexemes_df_check CHECK ((df >= 0))
);


--
-- Name: search_low_score_queries; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.search_low_score_queries AS
 SELECT s.query,
    s.mode,
    s.searches,
    round((s.top_score)::numeric, 5) AS min_top_score,
    round((s.top_bm25)::numeric, 3) AS min_top_bm25,
    s.last_seen,
    s.endpoint,
    s.filters
   FROM public.toolgate_analytics_low_score('-infinity'::timestamp with time zone) s(query, endpoint, mode, filters, searches, top_score, top_bm25, last_seen);


--
-- Name: search_postings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_postings (
    lexeme text NOT NULL,
    tool_id bigint NOT NULL,
    source_id bigint NOT NULL,
    impact real NOT NULL
);


--
-- Name: search_profile_daily; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.search_profile_daily AS
 SELECT p.day,
    p.profile,
    p.searches,
    p.labelled,
    p.label_rate,
    p.mrr
   FROM public.toolgate_analytics_profiles('-infinity'::timestamp with time zone) p(day, profile, searches, labelled, label_rate, mrr);


--
-- Name: search_used_rank; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.search_used_rank AS
 SELECT x.search_id,
    l.created_at,
    public.toolgate_search_profile(l.profile) AS profile,
    l.mode,
    l.k,
    x.tool_name,
    x.success,
    (x.rank)::bigint AS rank,
    public.toolgate_search_endpoint(l.endpoint, l.session_id, l.caller, l.caller_key_id) AS endpoint,
    x.label_source
   FROM (( SELECT search_labels.search_id,
            search_labels.search_created_at,
            search_labels.tool_name,
            bool_or(search_labels.success) AS success,
            min(search_labels.rank) AS rank,
                CASE
                    WHEN (count(*) > 1) THEN 'both'::text
                    ELSE min(search_labels.label_source)
                END AS label_source
           FROM public.search_labels
          GROUP BY search_labels.search_id, search_labels.search_created_at, search_labels.tool_name) x
     JOIN public.search_log l ON (((l.id = x.search_id) AND (l.created_at = x.search_created_at))));


--
-- Name: search_profile_quality; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.search_profile_quality AS
 SELECT search_used_rank.profile,
    search_used_rank.mode,
    count(*) AS used,
    round(avg(COALESCE((1.0 / (search_used_rank.rank)::numeric), (0)::numeric)), 4) AS mrr,
    round(avg(
        CASE
            WHEN (search_used_rank.rank = 1) THEN 1.0
            ELSE (0)::numeric
        END), 4) AS hit_at_1,
    round(avg(
        CASE
            WHEN (search_used_rank.rank <= 3) THEN 1.0
            ELSE (0)::numeric
        END), 4) AS hit_at_3,
    round(avg(
        CASE
            WHEN (search_used_rank.rank <= 5) THEN 1.0
            ELSE (0)::numeric
        END), 4) AS hit_at_5,
    round(avg(
        CASE
            WHEN (search_used_rank.rank IS NOT NULL) THEN 1.0
            ELSE (0)::numeric
        END), 4) AS hit_at_k
   FROM public.search_used_rank
  GROUP BY search_used_rank.profile, search_used_rank.mode;


--
-- Name: search_queue; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_queue (
    id bigint NOT NULL,
    tool_id bigint NOT NULL,
    queued_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: search_queue_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.search_queue ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.search_queue_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: search_reimpact_lease; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_reimpact_lease (
    singleton boolean DEFAULT true NOT NULL,
    holder text,
    until timestamp with time zone DEFAULT '-infinity'::timestamp with time zone NOT NULL,
    CONSTRAINT search_reimpact_lease_singleton_check CHECK (singleton)
);


--
-- Name: search_rollup_hourly; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_rollup_hourly (
    hour timestamp with time zone NOT NULL,
    endpoint text NOT NULL,
    profile text NOT NULL,
    mode text NOT NULL,
    searches bigint NOT NULL,
    zero_result bigint NOT NULL,
    low_score bigint NOT NULL,
    labelled bigint NOT NULL,
    rr_sum double precision NOT NULL,
    low_confidence bigint DEFAULT 0 NOT NULL,
    memory_helped bigint DEFAULT 0 NOT NULL
);


--
-- Name: search_rollup_latency; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_rollup_latency (
    hour timestamp with time zone NOT NULL,
    endpoint text NOT NULL,
    bucket smallint NOT NULL,
    searches bigint NOT NULL
);


--
-- Name: search_rollup_low; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_rollup_low (
    day date NOT NULL,
    query text NOT NULL,
    endpoint text NOT NULL,
    mode text NOT NULL,
    filters jsonb NOT NULL,
    searches bigint NOT NULL,
    top_score double precision,
    top_bm25 double precision NOT NULL,
    last_seen timestamp with time zone NOT NULL
);


--
-- Name: search_rollup_queries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_rollup_queries (
    day date NOT NULL,
    query text NOT NULL,
    searches bigint NOT NULL,
    zero_result bigint NOT NULL,
    last_seen timestamp with time zone NOT NULL
);


--
-- Name: search_rollup_slowest; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_rollup_slowest (
    day date NOT NULL,
    search_id bigint NOT NULL,
    created_at timestamp with time zone NOT NULL,
    latency_ms double precision NOT NULL
);


--
-- Name: search_rollup_state; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_rollup_state (
    singleton boolean DEFAULT true NOT NULL,
    through timestamp with time zone,
    labels_through timestamp with time zone,
    rules text,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT search_rollup_state_singleton_check CHECK (singleton)
);


--
-- Name: search_rollup_tenants; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_rollup_tenants (
    hour timestamp with time zone NOT NULL,
    tenant text NOT NULL,
    searches bigint NOT NULL,
    memory_helped bigint NOT NULL,
    labelled bigint NOT NULL,
    hit_1 bigint NOT NULL,
    hit_5 bigint NOT NULL
);


--
-- Name: search_rollup_tool_totals; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_rollup_tool_totals (
    tool_name text NOT NULL,
    returned bigint NOT NULL,
    returned_first bigint NOT NULL
);


--
-- Name: search_rollup_tools; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_rollup_tools (
    month date NOT NULL,
    tool_name text NOT NULL,
    returned bigint NOT NULL,
    returned_first bigint NOT NULL
);


--
-- Name: search_rollup_zero; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_rollup_zero (
    day date NOT NULL,
    query text NOT NULL,
    endpoint text NOT NULL,
    filters jsonb NOT NULL,
    searches bigint NOT NULL,
    last_seen timestamp with time zone NOT NULL
);


--
-- Name: search_rules; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_rules (
    id bigint NOT NULL,
    tenant text,
    match text NOT NULL,
    pattern text NOT NULL,
    action text NOT NULL,
    tool text NOT NULL,
    boost double precision,
    "position" integer,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    created_by text,
    CONSTRAINT search_rules_action_check CHECK ((action = ANY (ARRAY['pin'::text, 'hide'::text, 'boost'::text]))),
    CONSTRAINT search_rules_boost_check CHECK (((boost IS NULL) OR ((boost > (0)::double precision) AND (boost <= (100)::double precision)))),
    CONSTRAINT search_rules_check CHECK (((action = 'boost'::text) = (boost IS NOT NULL))),
    CONSTRAINT search_rules_check1 CHECK (((action = 'pin'::text) = ("position" IS NOT NULL))),
    CONSTRAINT search_rules_match_check CHECK ((match = ANY (ARRAY['exact'::text, 'contains'::text]))),
    CONSTRAINT search_rules_pattern_check CHECK (((length(pattern) >= 1) AND (length(pattern) <= 200))),
    CONSTRAINT search_rules_position_check CHECK ((("position" IS NULL) OR (("position" >= 1) AND ("position" <= 100)))),
    CONSTRAINT search_rules_tenant_check CHECK (((tenant IS NULL) OR (tenant ~ '^([A-Za-z0-9][A-Za-z0-9._-]{0,63}|key:[0-9]+)$'::text))),
    CONSTRAINT search_rules_tool_check CHECK (((length(tool) >= 1) AND (length(tool) <= 200)))
);


--
-- Name: search_rules_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.search_rules ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.search_rules_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: search_slowest; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.search_slowest AS
 SELECT s.id,
    s.created_at,
    round((s.latency_ms)::numeric, 2) AS latency_ms,
    s.timings,
    s.mode,
    s.k,
    s.result_count,
    "left"(s.query, 80) AS query,
    s.endpoint
   FROM public.toolgate_analytics_slowest('-infinity'::timestamp with time zone, 100) s(id, created_at, latency_ms, timings, endpoint, mode, k, result_count, query)
  ORDER BY s.latency_ms DESC;


--
-- Name: search_source_corpus; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_source_corpus (
    source_id bigint NOT NULL,
    docs bigint NOT NULL,
    total_len double precision NOT NULL
);


--
-- Name: search_source_languages; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_source_languages (
    source_id bigint NOT NULL,
    language text NOT NULL,
    docs bigint NOT NULL
);


--
-- Name: search_source_lexemes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_source_lexemes (
    lexeme text NOT NULL,
    source_id bigint NOT NULL,
    df integer NOT NULL,
    CONSTRAINT search_source_lexemes_df_check CHECK ((df >= 0))
);


--
-- Name: search_stopwords; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_stopwords (
    word text NOT NULL,
    language text NOT NULL
);


--
-- Name: search_synonyms; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_synonyms (
    id bigint NOT NULL,
    tenant text,
    word text NOT NULL,
    synonyms text[] NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    created_by text,
    CONSTRAINT search_synonyms_synonyms_check CHECK (((cardinality(synonyms) >= 1) AND (cardinality(synonyms) <= 20))),
    CONSTRAINT search_synonyms_tenant_check CHECK (((tenant IS NULL) OR (tenant ~ '^([A-Za-z0-9][A-Za-z0-9._-]{0,63}|key:[0-9]+)$'::text))),
    CONSTRAINT search_synonyms_word_check CHECK ((((length(word) >= 1) AND (length(word) <= 64)) AND (word = lower(word))))
);


--
-- Name: search_synonyms_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.search_synonyms ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.search_synonyms_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: search_tool_popularity; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.search_tool_popularity AS
 SELECT t.tool_name,
    t.returned,
    t.returned_first,
    t.called,
    t.succeeded,
    t.source,
    t.searchable
   FROM public.toolgate_analytics_tools() t(tool_name, source, searchable, returned, returned_first, called, succeeded);


--
-- Name: search_top_queries; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.search_top_queries AS
 SELECT q.query,
    q.searches,
    q.zero_result,
    q.last_seen
   FROM public.toolgate_analytics_top_queries('-infinity'::timestamp with time zone) q(query, searches, zero_result, last_seen);


--
-- Name: search_traffic; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.search_traffic AS
 SELECT h.hour,
    h.endpoint,
    h.profile,
    h.mode,
    h.searches,
    h.zero_result,
    h.low_score,
    h.labelled,
    round(((h.rr_sum / (NULLIF(h.labelled, 0))::double precision))::numeric, 4) AS mrr,
    h.low_confidence
   FROM public.toolgate_search_hourly('-infinity'::timestamp with time zone) h(hour, endpoint, profile, mode, searches, zero_result, low_score, labelled, rr_sum, low_confidence, memory_helped);


--
-- Name: search_zero_result_queries; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.search_zero_result_queries AS
 SELECT z.query,
    z.searches,
    z.last_seen,
    z.endpoint,
    z.filters
   FROM public.toolgate_analytics_zero_results('-infinity'::timestamp with time zone) z(query, endpoint, filters, searches, last_seen);


--
-- Name: source_oauth; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.source_oauth (
    source_id bigint NOT NULL,
    state text NOT NULL,
    error text,
    issuer text DEFAULT ''::text NOT NULL,
    token_endpoint text DEFAULT ''::text NOT NULL,
    revocation_endpoint text DEFAULT ''::text NOT NULL,
    client_id text DEFAULT ''::text NOT NULL,
    token_auth_method text DEFAULT 'none'::text NOT NULL,
    resource text DEFAULT ''::text NOT NULL,
    scope text DEFAULT ''::text NOT NULL,
    key_id text,
    secret bytea,
    expires_at timestamp with time zone,
    generation bigint DEFAULT 0 NOT NULL,
    authorized_at timestamp with time zone,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT source_oauth_check CHECK (((key_id IS NULL) = (secret IS NULL))),
    CONSTRAINT source_oauth_state_check CHECK ((state = ANY (ARRAY['authorized'::text, 'unauthorized'::text, 'refresh_failed'::text])))
);


--
-- Name: source_oauth_pending; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.source_oauth_pending (
    state_hash bytea NOT NULL,
    source_id bigint NOT NULL,
    issuer text NOT NULL,
    token_endpoint text NOT NULL,
    revocation_endpoint text NOT NULL,
    client_id text NOT NULL,
    token_auth_method text NOT NULL,
    resource text NOT NULL,
    scope text NOT NULL,
    redirect_uri text NOT NULL,
    key_id text NOT NULL,
    secret bytea NOT NULL,
    started_by text NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: sources; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sources (
    id bigint NOT NULL,
    name text NOT NULL,
    kind text NOT NULL,
    config jsonb DEFAULT '{}'::jsonb NOT NULL,
    sync_interval interval,
    review_mode boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT sources_kind_check CHECK ((kind = ANY (ARRAY['catalog'::text, 'mcp_stdio'::text, 'mcp_http'::text]))),
    CONSTRAINT sources_name_check CHECK ((name ~ '^[a-z0-9][a-z0-9-]{0,31}$'::text)),
    CONSTRAINT sources_sync_interval_check CHECK (((sync_interval IS NULL) OR (sync_interval >= '00:00:10'::interval)))
);


--
-- Name: sources_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.sources ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.sources_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: sync_runs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sync_runs (
    id bigint NOT NULL,
    source_id bigint NOT NULL,
    state text NOT NULL,
    created integer DEFAULT 0 NOT NULL,
    updated integer DEFAULT 0 NOT NULL,
    deleted integer DEFAULT 0 NOT NULL,
    unchanged integer DEFAULT 0 NOT NULL,
    skipped jsonb DEFAULT '[]'::jsonb NOT NULL,
    error text,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    pending integer DEFAULT 0 NOT NULL,
    CONSTRAINT sync_runs_state_check CHECK ((state = ANY (ARRAY['running'::text, 'succeeded'::text, 'failed'::text])))
);


--
-- Name: sync_runs_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.sync_runs ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.sync_runs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: tool_components; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tool_components (
    tool_id bigint NOT NULL,
    kind text NOT NULL,
    ordinal integer DEFAULT 0 NOT NULL,
    text text NOT NULL,
    text_hash text NOT NULL,
    embedding public.vector,
    model text,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: tool_demotions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tool_demotions (
    tenant text NOT NULL,
    tool_id bigint NOT NULL,
    ignored integer NOT NULL,
    failed integer NOT NULL,
    used integer NOT NULL,
    CONSTRAINT tool_demotions_failed_check CHECK ((failed >= 0)),
    CONSTRAINT tool_demotions_ignored_check CHECK ((ignored >= 0)),
    CONSTRAINT tool_demotions_used_check CHECK ((used >= 0))
);


--
-- Name: tool_enrichments; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tool_enrichments (
    tool_id bigint NOT NULL,
    step text NOT NULL,
    content_hash text NOT NULL,
    model text NOT NULL,
    output jsonb NOT NULL,
    prompt_tokens integer DEFAULT 0 NOT NULL,
    completion_tokens integer DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT tool_enrichments_step_check CHECK ((step = ANY (ARRAY['profile'::text, 'questions'::text, 'topics'::text, 'expansion'::text])))
);


--
-- Name: tool_meanings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tool_meanings (
    tool_id bigint NOT NULL,
    meaning public.sparsevec NOT NULL
);


--
-- Name: tool_memories; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tool_memories (
    id bigint NOT NULL,
    tool_id bigint NOT NULL,
    tenant text NOT NULL,
    key_id bigint,
    norm text NOT NULL,
    query text NOT NULL,
    embedding public.halfvec,
    searches integer NOT NULL,
    labelled_at timestamp with time zone NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    list integer DEFAULT '-1'::integer NOT NULL,
    CONSTRAINT tool_memories_check CHECK (((tenant = ''::text) = (key_id IS NULL))),
    CONSTRAINT tool_memories_searches_check CHECK ((searches > 0))
);


--
-- Name: tool_memories_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.tool_memories ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.tool_memories_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: tool_memory_forgets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tool_memory_forgets (
    tool_id bigint NOT NULL,
    forgotten_at timestamp with time zone NOT NULL
);


--
-- Name: tool_memory_lists; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tool_memory_lists (
    tenant text NOT NULL,
    list integer NOT NULL,
    centroid public.halfvec NOT NULL,
    CONSTRAINT tool_memory_lists_list_check CHECK ((list >= 0))
);


--
-- Name: tool_memory_query_forgets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tool_memory_query_forgets (
    tool_id bigint NOT NULL,
    tenant text NOT NULL,
    norm text NOT NULL,
    forgotten_at timestamp with time zone NOT NULL
);


--
-- Name: tool_memory_tenants; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tool_memory_tenants (
    tenant text NOT NULL,
    memories integer NOT NULL,
    lists integer DEFAULT 0 NOT NULL,
    listed integer DEFAULT 0 NOT NULL,
    CONSTRAINT tool_memory_tenants_listed_check CHECK ((listed >= 0)),
    CONSTRAINT tool_memory_tenants_lists_check CHECK ((lists >= 0)),
    CONSTRAINT tool_memory_tenants_memories_check CHECK ((memories > 0))
);


--
-- Name: tool_revisions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tool_revisions (
    id bigint NOT NULL,
    source_id bigint NOT NULL,
    tool_name text NOT NULL,
    action text NOT NULL,
    old_hash text,
    new_hash text,
    changed_fields text[] DEFAULT '{}'::text[] NOT NULL,
    definition jsonb,
    status text DEFAULT 'applied'::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    decided_at timestamp with time zone,
    CONSTRAINT tool_revisions_action_check CHECK ((action = ANY (ARRAY['created'::text, 'updated'::text, 'deleted'::text]))),
    CONSTRAINT tool_revisions_status_check CHECK ((status = ANY (ARRAY['applied'::text, 'pending'::text, 'approved'::text, 'rejected'::text])))
);


--
-- Name: tool_revisions_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.tool_revisions ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.tool_revisions_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: tool_vectors; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tool_vectors (
    set_id bigint NOT NULL,
    tool_id bigint NOT NULL,
    embedding public.vector NOT NULL
)
PARTITION BY LIST (set_id);


--
-- Name: tools; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tools (
    id bigint NOT NULL,
    source_id bigint NOT NULL,
    name text NOT NULL,
    original_name text NOT NULL,
    title text,
    description text DEFAULT ''::text NOT NULL,
    input_schema jsonb NOT NULL,
    output_schema jsonb,
    annotations jsonb,
    content_hash text NOT NULL,
    enabled boolean DEFAULT true NOT NULL,
    review_state text DEFAULT 'approved'::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    expansion_off boolean DEFAULT false NOT NULL,
    CONSTRAINT tools_input_schema_check CHECK ((jsonb_typeof(input_schema) = 'object'::text)),
    CONSTRAINT tools_output_schema_check CHECK (((output_schema IS NULL) OR (jsonb_typeof(output_schema) = 'object'::text))),
    CONSTRAINT tools_review_state_check CHECK ((review_state = ANY (ARRAY['approved'::text, 'pending'::text])))
);


--
-- Name: tools_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.tools ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.tools_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: vector_sets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.vector_sets (
    id bigint NOT NULL,
    profile_id bigint NOT NULL,
    state text NOT NULL,
    total integer DEFAULT 0 NOT NULL,
    done integer DEFAULT 0 NOT NULL,
    error text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    strategy text NOT NULL,
    weights jsonb NOT NULL,
    index_deferred boolean DEFAULT false NOT NULL,
    CONSTRAINT vector_sets_state_check CHECK ((state = ANY (ARRAY['building'::text, 'ready'::text, 'retired'::text, 'failed'::text])))
);


--
-- Name: vector_sets_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.vector_sets ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.vector_sets_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: weight_profiles; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.weight_profiles (
    id bigint NOT NULL,
    name text NOT NULL,
    strategy text NOT NULL,
    weights jsonb DEFAULT '{}'::jsonb NOT NULL,
    is_active boolean DEFAULT false NOT NULL,
    current_set bigint,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    tune_id bigint,
    weight_lexical double precision,
    weight_vector double precision,
    CONSTRAINT weight_profiles_fusion_check CHECK (((weight_lexical IS NULL) = (weight_vector IS NULL))),
    CONSTRAINT weight_profiles_name_check CHECK ((name ~ '^[a-z0-9][a-z0-9_.-]{0,63}$'::text)),
    CONSTRAINT weight_profiles_strategy_check CHECK ((strategy = ANY (ARRAY['tdwa'::text, 'concat'::text, 'mean'::text]))),
    CONSTRAINT weight_profiles_weight_lexical_check CHECK (((weight_lexical >= (0)::double precision) AND (weight_lexical <= (100)::double precision))),
    CONSTRAINT weight_profiles_weight_vector_check CHECK (((weight_vector >= (0)::double precision) AND (weight_vector <= (100)::double precision)))
);


--
-- Name: weight_profiles_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.weight_profiles ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.weight_profiles_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: profile_tunes id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.profile_tunes ALTER COLUMN id SET DEFAULT nextval('public.profile_tunes_id_seq'::regclass);


--
-- Name: river_job id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.river_job ALTER COLUMN id SET DEFAULT nextval('public.river_job_id_seq'::regclass);


--
-- Name: river_notification id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.river_notification ALTER COLUMN id SET DEFAULT nextval('public.river_notification_id_seq'::regclass);


--
-- Name: api_key_rate api_key_rate_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_key_rate
    ADD CONSTRAINT api_key_rate_pkey PRIMARY KEY (key_id, window_start);


--
-- Name: api_keys api_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_pkey PRIMARY KEY (id);


--
-- Name: api_keys api_keys_prefix_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_prefix_key UNIQUE (prefix);


--
-- Name: embedding_space embedding_space_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.embedding_space
    ADD CONSTRAINT embedding_space_pkey PRIMARY KEY (singleton);


--
-- Name: mcp_session_tools mcp_session_tools_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mcp_session_tools
    ADD CONSTRAINT mcp_session_tools_pkey PRIMARY KEY (session_id, tool_name);


--
-- Name: mcp_sessions mcp_sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mcp_sessions
    ADD CONSTRAINT mcp_sessions_pkey PRIMARY KEY (id);


--
-- Name: memory_sweep memory_sweep_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_sweep
    ADD CONSTRAINT memory_sweep_pkey PRIMARY KEY (singleton);


--
-- Name: oauth_subject_rate oauth_subject_rate_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.oauth_subject_rate
    ADD CONSTRAINT oauth_subject_rate_pkey PRIMARY KEY (subject, window_start);


--
-- Name: observed_query_forgets observed_query_forgets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.observed_query_forgets
    ADD CONSTRAINT observed_query_forgets_pkey PRIMARY KEY (source_id);


--
-- Name: observed_query_sweep observed_query_sweep_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.observed_query_sweep
    ADD CONSTRAINT observed_query_sweep_pkey PRIMARY KEY (singleton);


--
-- Name: profile_experiments profile_experiments_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.profile_experiments
    ADD CONSTRAINT profile_experiments_name_key UNIQUE (name);


--
-- Name: profile_experiments profile_experiments_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.profile_experiments
    ADD CONSTRAINT profile_experiments_pkey PRIMARY KEY (id);


--
-- Name: profile_tunes profile_tunes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.profile_tunes
    ADD CONSTRAINT profile_tunes_pkey PRIMARY KEY (id);


--
-- Name: river_job river_job_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.river_job
    ADD CONSTRAINT river_job_pkey PRIMARY KEY (id);


--
-- Name: river_leader river_leader_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.river_leader
    ADD CONSTRAINT river_leader_pkey PRIMARY KEY (name);


--
-- Name: river_migration river_migration_pkey1; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.river_migration
    ADD CONSTRAINT river_migration_pkey1 PRIMARY KEY (line, version);


--
-- Name: river_notification river_notification_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.river_notification
    ADD CONSTRAINT river_notification_pkey PRIMARY KEY (id);


--
-- Name: river_queue river_queue_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.river_queue
    ADD CONSTRAINT river_queue_pkey PRIMARY KEY (name);


--
-- Name: schema_functions schema_functions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_functions
    ADD CONSTRAINT schema_functions_pkey PRIMARY KEY (file);


--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);


--
-- Name: search_corpus search_corpus_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_corpus
    ADD CONSTRAINT search_corpus_pkey PRIMARY KEY (singleton);


--
-- Name: search_docs search_docs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_docs
    ADD CONSTRAINT search_docs_pkey PRIMARY KEY (tool_id);


--
-- Name: search_feedback search_feedback_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_feedback
    ADD CONSTRAINT search_feedback_pkey PRIMARY KEY (id);


--
-- Name: search_id_key search_id_key_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_id_key
    ADD CONSTRAINT search_id_key_pkey PRIMARY KEY (only_row);


--
-- Name: search_labels search_labels_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_labels
    ADD CONSTRAINT search_labels_pkey PRIMARY KEY (search_id, tool_name, label_source);


--
-- Name: search_languages search_languages_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_languages
    ADD CONSTRAINT search_languages_pkey PRIMARY KEY (language);


--
-- Name: search_lexemes search_lexemes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_lexemes
    ADD CONSTRAINT search_lexemes_pkey PRIMARY KEY (lexeme);


--
-- Name: search_log search_log_arm; Type: CHECK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE public.search_log
    ADD CONSTRAINT search_log_arm CHECK ((((experiment_id IS NULL) AND (arm IS NULL)) OR ((experiment_id IS NOT NULL) AND (arm = ANY (ARRAY['control'::text, 'candidate'::text]))))) NOT VALID;


--
-- Name: search_log search_log_endpoint; Type: CHECK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE public.search_log
    ADD CONSTRAINT search_log_endpoint CHECK ((endpoint = ANY (ARRAY['rest'::text, 'find_tools'::text, 'internal'::text]))) NOT VALID;


--
-- Name: search_log search_log_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_log
    ADD CONSTRAINT search_log_pkey PRIMARY KEY (id, created_at);


--
-- Name: search_postings search_postings_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_postings
    ADD CONSTRAINT search_postings_pkey PRIMARY KEY (tool_id, lexeme);


--
-- Name: search_queue search_queue_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_queue
    ADD CONSTRAINT search_queue_pkey PRIMARY KEY (id);


--
-- Name: search_reimpact_lease search_reimpact_lease_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_reimpact_lease
    ADD CONSTRAINT search_reimpact_lease_pkey PRIMARY KEY (singleton);


--
-- Name: search_rollup_hourly search_rollup_hourly_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_rollup_hourly
    ADD CONSTRAINT search_rollup_hourly_pkey PRIMARY KEY (hour, endpoint, profile, mode);


--
-- Name: search_rollup_latency search_rollup_latency_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_rollup_latency
    ADD CONSTRAINT search_rollup_latency_pkey PRIMARY KEY (hour, endpoint, bucket);


--
-- Name: search_rollup_slowest search_rollup_slowest_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_rollup_slowest
    ADD CONSTRAINT search_rollup_slowest_pkey PRIMARY KEY (search_id, created_at);


--
-- Name: search_rollup_state search_rollup_state_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_rollup_state
    ADD CONSTRAINT search_rollup_state_pkey PRIMARY KEY (singleton);


--
-- Name: search_rollup_tenants search_rollup_tenants_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_rollup_tenants
    ADD CONSTRAINT search_rollup_tenants_pkey PRIMARY KEY (tenant, hour);


--
-- Name: search_rollup_tool_totals search_rollup_tool_totals_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_rollup_tool_totals
    ADD CONSTRAINT search_rollup_tool_totals_pkey PRIMARY KEY (tool_name);


--
-- Name: search_rollup_tools search_rollup_tools_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_rollup_tools
    ADD CONSTRAINT search_rollup_tools_pkey PRIMARY KEY (month, tool_name);


--
-- Name: search_rules search_rules_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_rules
    ADD CONSTRAINT search_rules_pkey PRIMARY KEY (id);


--
-- Name: search_source_corpus search_source_corpus_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_source_corpus
    ADD CONSTRAINT search_source_corpus_pkey PRIMARY KEY (source_id);


--
-- Name: search_source_languages search_source_languages_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_source_languages
    ADD CONSTRAINT search_source_languages_pkey PRIMARY KEY (source_id, language);


--
-- Name: search_source_lexemes search_source_lexemes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_source_lexemes
    ADD CONSTRAINT search_source_lexemes_pkey PRIMARY KEY (lexeme, source_id);


--
-- Name: search_stopwords search_stopwords_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_stopwords
    ADD CONSTRAINT search_stopwords_pkey PRIMARY KEY (word, language);


--
-- Name: search_synonyms search_synonyms_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_synonyms
    ADD CONSTRAINT search_synonyms_pkey PRIMARY KEY (id);


--
-- Name: search_synonyms search_synonyms_tenant_word_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_synonyms
    ADD CONSTRAINT search_synonyms_tenant_word_key UNIQUE NULLS NOT DISTINCT (tenant, word);


--
-- Name: source_oauth_pending source_oauth_pending_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.source_oauth_pending
    ADD CONSTRAINT source_oauth_pending_pkey PRIMARY KEY (state_hash);


--
-- Name: source_oauth source_oauth_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.source_oauth
    ADD CONSTRAINT source_oauth_pkey PRIMARY KEY (source_id);


--
-- Name: sources sources_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sources
    ADD CONSTRAINT sources_name_key UNIQUE (name);


--
-- Name: sources sources_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sources
    ADD CONSTRAINT sources_pkey PRIMARY KEY (id);


--
-- Name: sync_runs sync_runs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sync_runs
    ADD CONSTRAINT sync_runs_pkey PRIMARY KEY (id);


--
-- Name: tool_components tool_components_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tool_components
    ADD CONSTRAINT tool_components_pkey PRIMARY KEY (tool_id, kind, ordinal);


--
-- Name: tool_demotions tool_demotions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tool_demotions
    ADD CONSTRAINT tool_demotions_pkey PRIMARY KEY (tenant, tool_id);


--
-- Name: tool_enrichments tool_enrichments_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tool_enrichments
    ADD CONSTRAINT tool_enrichments_pkey PRIMARY KEY (tool_id, step);


--
-- Name: tool_meanings tool_meanings_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tool_meanings
    ADD CONSTRAINT tool_meanings_pkey PRIMARY KEY (tool_id);


--
-- Name: tool_memories tool_memories_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tool_memories
    ADD CONSTRAINT tool_memories_pkey PRIMARY KEY (id);


--
-- Name: tool_memory_forgets tool_memory_forgets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tool_memory_forgets
    ADD CONSTRAINT tool_memory_forgets_pkey PRIMARY KEY (tool_id);


--
-- Name: tool_memory_lists tool_memory_lists_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tool_memory_lists
    ADD CONSTRAINT tool_memory_lists_pkey PRIMARY KEY (tenant, list);


--
-- Name: tool_memory_query_forgets tool_memory_query_forgets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tool_memory_query_forgets
    ADD CONSTRAINT tool_memory_query_forgets_pkey PRIMARY KEY (tool_id, tenant, norm);


--
-- Name: tool_memory_tenants tool_memory_tenants_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tool_memory_tenants
    ADD CONSTRAINT tool_memory_tenants_pkey PRIMARY KEY (tenant);


--
-- Name: tool_revisions tool_revisions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tool_revisions
    ADD CONSTRAINT tool_revisions_pkey PRIMARY KEY (id);


--
-- Name: tool_vectors tool_vectors_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tool_vectors
    ADD CONSTRAINT tool_vectors_pkey PRIMARY KEY (set_id, tool_id);


--
-- Name: tools tools_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tools
    ADD CONSTRAINT tools_name_key UNIQUE (name);


--
-- Name: tools tools_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tools
    ADD CONSTRAINT tools_pkey PRIMARY KEY (id);


--
-- Name: tools tools_source_id_original_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tools
    ADD CONSTRAINT tools_source_id_original_name_key UNIQUE (source_id, original_name);


--
-- Name: vector_sets vector_sets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.vector_sets
    ADD CONSTRAINT vector_sets_pkey PRIMARY KEY (id);


--
-- Name: weight_profiles weight_profiles_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.weight_profiles
    ADD CONSTRAINT weight_profiles_name_key UNIQUE (name);


--
-- Name: weight_profiles weight_profiles_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.weight_profiles
    ADD CONSTRAINT weight_profiles_pkey PRIMARY KEY (id);


--
-- Name: api_keys_active_name; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX api_keys_active_name ON public.api_keys USING btree (name) WHERE (revoked_at IS NULL);


--
-- Name: mcp_sessions_caller_key; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX mcp_sessions_caller_key ON public.mcp_sessions USING btree (caller_key_id) WHERE (caller_key_id IS NOT NULL);


--
-- Name: mcp_sessions_last_seen; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX mcp_sessions_last_seen ON public.mcp_sessions USING btree (last_seen_at);


--
-- Name: profile_experiments_one_running; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX profile_experiments_one_running ON public.profile_experiments USING btree ((true)) WHERE (stopped_at IS NULL);


--
-- Name: river_job_args_index; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX river_job_args_index ON public.river_job USING gin (args);


--
-- Name: river_job_kind; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX river_job_kind ON public.river_job USING btree (kind);


--
-- Name: river_job_metadata_index; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX river_job_metadata_index ON public.river_job USING gin (metadata);


--
-- Name: river_job_prioritized_fetching_index; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX river_job_prioritized_fetching_index ON public.river_job USING btree (state, queue, priority, scheduled_at, id);


--
-- Name: river_job_state_and_finalized_at_index; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX river_job_state_and_finalized_at_index ON public.river_job USING btree (state, finalized_at) WHERE (finalized_at IS NOT NULL);


--
-- Name: river_job_unique_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX river_job_unique_idx ON public.river_job USING btree (unique_key) WHERE ((unique_key IS NOT NULL) AND (unique_states IS NOT NULL) AND public.river_job_state_in_bitmask(unique_states, state));


--
-- Name: river_notification_created_at_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX river_notification_created_at_idx ON public.river_notification USING btree (created_at);


--
-- Name: river_notification_topic_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX river_notification_topic_id_idx ON public.river_notification USING btree (topic, id);


--
-- Name: search_docs_name_keys; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX search_docs_name_keys ON public.search_docs USING gin (name_keys);


--
-- Name: search_docs_tags; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX search_docs_tags ON public.search_docs USING gin (tags);


--
-- Name: search_feedback_search; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX search_feedback_search ON public.search_feedback USING btree (search_id);


--
-- Name: search_labels_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX search_labels_created ON public.search_labels USING btree (created_at);


--
-- Name: search_labels_search_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX search_labels_search_created ON public.search_labels USING btree (search_created_at);


--
-- Name: search_labels_tool; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX search_labels_tool ON public.search_labels USING btree (tool_name);


--
-- Name: search_log_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX search_log_created ON ONLY public.search_log USING btree (created_at);


--
-- Name: search_log_experiment; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX search_log_experiment ON ONLY public.search_log USING btree (experiment_id, arm) WHERE (experiment_id IS NOT NULL);


--
-- Name: search_log_session; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX search_log_session ON ONLY public.search_log USING btree (session_id) WHERE (session_id IS NOT NULL);


--
-- Name: search_postings_impact; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX search_postings_impact ON public.search_postings USING btree (lexeme, impact DESC) INCLUDE (tool_id, source_id);


--
-- Name: search_queue_tool; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX search_queue_tool ON public.search_queue USING btree (tool_id);


--
-- Name: search_rollup_low_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX search_rollup_low_key ON public.search_rollup_low USING btree (day, endpoint, mode, md5(query), md5((filters)::text));


--
-- Name: search_rollup_queries_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX search_rollup_queries_key ON public.search_rollup_queries USING btree (day, md5(query));


--
-- Name: search_rollup_slowest_day; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX search_rollup_slowest_day ON public.search_rollup_slowest USING btree (day, latency_ms DESC);


--
-- Name: search_rollup_tenants_hour; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX search_rollup_tenants_hour ON public.search_rollup_tenants USING btree (hour);


--
-- Name: search_rollup_zero_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX search_rollup_zero_key ON public.search_rollup_zero USING btree (day, endpoint, md5(query), md5((filters)::text));


--
-- Name: search_rules_tenant; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX search_rules_tenant ON public.search_rules USING btree (tenant);


--
-- Name: search_synonyms_word; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX search_synonyms_word ON public.search_synonyms USING btree (word);


--
-- Name: source_oauth_pending_expires; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX source_oauth_pending_expires ON public.source_oauth_pending USING btree (expires_at);


--
-- Name: source_oauth_pending_source; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX source_oauth_pending_source ON public.source_oauth_pending USING btree (source_id);


--
-- Name: sync_runs_source_started; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sync_runs_source_started ON public.sync_runs USING btree (source_id, started_at DESC);


--
-- Name: tool_memories_identity; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX tool_memories_identity ON public.tool_memories USING btree (tool_id, tenant, COALESCE(key_id, (0)::bigint), norm);


--
-- Name: tool_memories_key; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tool_memories_key ON public.tool_memories USING btree (key_id) WHERE (key_id IS NOT NULL);


--
-- Name: tool_memories_tenant; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tool_memories_tenant ON public.tool_memories USING btree (tenant);


--
-- Name: tool_revisions_pending; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tool_revisions_pending ON public.tool_revisions USING btree (source_id) WHERE (status = 'pending'::text);


--
-- Name: tool_revisions_tool; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tool_revisions_tool ON public.tool_revisions USING btree (tool_name, created_at DESC);


--
-- Name: tool_vectors_tool; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tool_vectors_tool ON ONLY public.tool_vectors USING btree (tool_id);


--
-- Name: weight_profiles_one_active; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX weight_profiles_one_active ON public.weight_profiles USING btree (is_active) WHERE is_active;


--
-- Name: search_feedback search_feedback_label; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER search_feedback_label AFTER INSERT ON public.search_feedback REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.toolgate_feedback_label();


--
-- Name: tool_components tool_components_search_queue_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER tool_components_search_queue_delete AFTER DELETE ON public.tool_components REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.toolgate_components_search_queue();


--
-- Name: tool_components tool_components_search_queue_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER tool_components_search_queue_insert AFTER INSERT ON public.tool_components REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.toolgate_components_search_queue();


--
-- Name: tool_components tool_components_search_queue_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER tool_components_search_queue_update AFTER UPDATE ON public.tool_components REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.toolgate_components_search_queue();


--
-- Name: tool_memories tool_memories_unit; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER tool_memories_unit BEFORE INSERT OR UPDATE ON public.tool_memories FOR EACH ROW EXECUTE FUNCTION public.toolgate_unit_memory();


--
-- Name: tools tools_search_queue_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER tools_search_queue_delete AFTER DELETE ON public.tools REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.toolgate_tools_search_queue();


--
-- Name: tools tools_search_queue_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER tools_search_queue_insert AFTER INSERT ON public.tools REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.toolgate_tools_search_queue();


--
-- Name: tools tools_search_queue_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER tools_search_queue_update AFTER UPDATE ON public.tools REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.toolgate_tools_search_queue();


--
-- Name: vector_sets vector_sets_defer_index; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER vector_sets_defer_index BEFORE INSERT ON public.vector_sets FOR EACH ROW EXECUTE FUNCTION public.toolgate_vector_sets_defer_index();


--
-- Name: vector_sets vector_sets_partition; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER vector_sets_partition AFTER INSERT OR DELETE ON public.vector_sets FOR EACH ROW EXECUTE FUNCTION public.toolgate_vector_sets_partition();


--
-- Name: mcp_session_tools mcp_session_tools_session_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mcp_session_tools
    ADD CONSTRAINT mcp_session_tools_session_id_fkey FOREIGN KEY (session_id) REFERENCES public.mcp_sessions(id) ON DELETE CASCADE;


--
-- Name: observed_query_forgets observed_query_forgets_source_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.observed_query_forgets
    ADD CONSTRAINT observed_query_forgets_source_id_fkey FOREIGN KEY (source_id) REFERENCES public.sources(id) ON DELETE CASCADE;


--
-- Name: profile_experiments profile_experiments_candidate_profile_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.profile_experiments
    ADD CONSTRAINT profile_experiments_candidate_profile_id_fkey FOREIGN KEY (candidate_profile_id) REFERENCES public.weight_profiles(id) ON DELETE SET NULL;


--
-- Name: profile_experiments profile_experiments_control_profile_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.profile_experiments
    ADD CONSTRAINT profile_experiments_control_profile_id_fkey FOREIGN KEY (control_profile_id) REFERENCES public.weight_profiles(id) ON DELETE SET NULL;


--
-- Name: source_oauth_pending source_oauth_pending_source_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.source_oauth_pending
    ADD CONSTRAINT source_oauth_pending_source_id_fkey FOREIGN KEY (source_id) REFERENCES public.sources(id) ON DELETE CASCADE;


--
-- Name: source_oauth source_oauth_source_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.source_oauth
    ADD CONSTRAINT source_oauth_source_id_fkey FOREIGN KEY (source_id) REFERENCES public.sources(id) ON DELETE CASCADE;


--
-- Name: sync_runs sync_runs_source_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sync_runs
    ADD CONSTRAINT sync_runs_source_id_fkey FOREIGN KEY (source_id) REFERENCES public.sources(id) ON DELETE CASCADE;


--
-- Name: tool_components tool_components_tool_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tool_components
    ADD CONSTRAINT tool_components_tool_id_fkey FOREIGN KEY (tool_id) REFERENCES public.tools(id) ON DELETE CASCADE;


--
-- Name: tool_demotions tool_demotions_tool_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tool_demotions
    ADD CONSTRAINT tool_demotions_tool_id_fkey FOREIGN KEY (tool_id) REFERENCES public.tools(id) ON DELETE CASCADE;


--
-- Name: tool_enrichments tool_enrichments_tool_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tool_enrichments
    ADD CONSTRAINT tool_enrichments_tool_id_fkey FOREIGN KEY (tool_id) REFERENCES public.tools(id) ON DELETE CASCADE;


--
-- Name: tool_memories tool_memories_key_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tool_memories
    ADD CONSTRAINT tool_memories_key_id_fkey FOREIGN KEY (key_id) REFERENCES public.api_keys(id) ON DELETE CASCADE;


--
-- Name: tool_memories tool_memories_tool_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tool_memories
    ADD CONSTRAINT tool_memories_tool_id_fkey FOREIGN KEY (tool_id) REFERENCES public.tools(id) ON DELETE CASCADE;


--
-- Name: tool_memory_forgets tool_memory_forgets_tool_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tool_memory_forgets
    ADD CONSTRAINT tool_memory_forgets_tool_id_fkey FOREIGN KEY (tool_id) REFERENCES public.tools(id) ON DELETE CASCADE;


--
-- Name: tool_memory_query_forgets tool_memory_query_forgets_tool_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tool_memory_query_forgets
    ADD CONSTRAINT tool_memory_query_forgets_tool_id_fkey FOREIGN KEY (tool_id) REFERENCES public.tools(id) ON DELETE CASCADE;


--
-- Name: tool_revisions tool_revisions_source_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tool_revisions
    ADD CONSTRAINT tool_revisions_source_id_fkey FOREIGN KEY (source_id) REFERENCES public.sources(id) ON DELETE CASCADE;


--
-- Name: tool_vectors tool_vectors_set_id_fkey1; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE public.tool_vectors
    ADD CONSTRAINT tool_vectors_set_id_fkey1 FOREIGN KEY (set_id) REFERENCES public.vector_sets(id) ON DELETE CASCADE;


--
-- Name: tool_vectors tool_vectors_tool_id_fkey1; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE public.tool_vectors
    ADD CONSTRAINT tool_vectors_tool_id_fkey1 FOREIGN KEY (tool_id) REFERENCES public.tools(id) ON DELETE CASCADE;


--
-- Name: tools tools_source_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tools
    ADD CONSTRAINT tools_source_id_fkey FOREIGN KEY (source_id) REFERENCES public.sources(id) ON DELETE CASCADE;


--
-- Name: vector_sets vector_sets_profile_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.vector_sets
    ADD CONSTRAINT vector_sets_profile_id_fkey FOREIGN KEY (profile_id) REFERENCES public.weight_profiles(id) ON DELETE CASCADE;


--
-- Name: weight_profiles weight_profiles_current_set_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.weight_profiles
    ADD CONSTRAINT weight_profiles_current_set_fk FOREIGN KEY (current_set) REFERENCES public.vector_sets(id) ON DELETE SET NULL;


--
-- Name: weight_profiles weight_profiles_tune_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.weight_profiles
    ADD CONSTRAINT weight_profiles_tune_id_fkey FOREIGN KEY (tune_id) REFERENCES public.profile_tunes(id) ON DELETE SET NULL;


--
-- PostgreSQL database dump complete
--