-- Search, version 4: the lexical index BM25 reads, kept up to date by the database itself,
-- and the analytics views over the retrieval log.
--
-- The lexical document of a tool is one weighted tsvector (english configuration):
--   A (weight 3.0): the namespaced name and the title, as words (`acme__getStockPrice` ->
--                   "acme get stock price");
--   B (weight 2.0): synthetic questions, key topics, Tool-DE profile tags and function;
--   C (weight 1.0): the description and the profile's when_to_use;
--   D (weight 0.5): parameter names and parameter descriptions of the input schema.
-- A lexeme's term frequency in a document is the sum of the weights of its positions, the
-- document length is the sum over all its lexemes. profile_limitation and example_usage are
-- left out (Tool-DE found example usage hurts retrieval), so is the `concat` component.
--
-- Only searchable tools (enabled and approved) are indexed, so N, the average length and the
-- document frequencies describe exactly the corpus a search may return.

-- toolgate_name_key turns a tool name (or a query) into lower-case words separated by one
-- space: camelCase, snake_case, kebab-case and the `__` namespace separator all split.
CREATE FUNCTION toolgate_name_key(s text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
    SELECT btrim(lower(regexp_replace(
        regexp_replace(s, '([a-z0-9])([A-Z])', '\1 \2', 'g'),
        '[^A-Za-z0-9]+', ' ', 'g')))
$$;

-- The weight of a tsvector field label in the term frequency.
CREATE FUNCTION toolgate_field_weight(label text) RETURNS real
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE label WHEN 'A' THEN 3.0 WHEN 'B' THEN 2.0 WHEN 'C' THEN 1.0 ELSE 0.5 END::real
$$;

-- One row per searchable tool: its document, length, tags and name keys.
CREATE TABLE search_docs (
    tool_id   bigint PRIMARY KEY,  -- no foreign key: the triggers below remove the row
    source_id bigint NOT NULL,
    doc       tsvector NOT NULL,
    doc_len   real NOT NULL,
    -- lower-cased tags of the profile_tags component, for the tags filter.
    tags      text[] NOT NULL DEFAULT '{}',
    -- toolgate_name_key of the namespaced and the original name, for exact-name matches.
    name_keys text[] NOT NULL
);
CREATE INDEX search_docs_doc ON search_docs USING gin (doc);
CREATE INDEX search_docs_name_keys ON search_docs USING gin (name_keys);
CREATE INDEX search_docs_tags ON search_docs USING gin (tags);

-- The postings: per (lexeme, tool) the weighted term frequency and an impact score, the BM25
-- term weight with the default k1 = 1.2, b = 0.75 and the average length at write time. The
-- impact only chooses the bounded candidate set of a query term (the top postings by impact);
-- candidates are then scored exactly with the request's k1 and b.
-- Both indexes carry tf and the document length so the search reads postings with
-- index-only scans.
CREATE TABLE search_postings (
    lexeme    text NOT NULL,
    tool_id   bigint NOT NULL,
    source_id bigint NOT NULL,
    tf        real NOT NULL,
    doc_len   real NOT NULL,
    impact    real NOT NULL,
    PRIMARY KEY (lexeme, tool_id) INCLUDE (tf, doc_len)
);
CREATE INDEX search_postings_impact ON search_postings (lexeme, impact DESC) INCLUDE (tool_id, source_id, tf, doc_len);
CREATE INDEX search_postings_tool ON search_postings (tool_id);

-- Document frequency per lexeme.
CREATE TABLE search_lexemes (
    lexeme text PRIMARY KEY,
    df     integer NOT NULL CHECK (df >= 0)  -- rows reaching 0 are deleted by the refresh
);

-- N and the total document length (average = total_len / docs).
CREATE TABLE search_corpus (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    docs      bigint NOT NULL,
    total_len double precision NOT NULL
);
INSERT INTO search_corpus VALUES (true, 0, 0);

-- toolgate_search_refresh recomputes the lexical index rows of the given tools from the
-- current tools and tool_components rows: idempotent, so any trigger may call it for any
-- tool. Writers are serialized by one transaction-level advisory lock: every writer updates
-- the shared search_corpus row and overlapping search_lexemes rows, and taking that one lock
-- first rules out lock-ordering deadlocks between them.
CREATE FUNCTION toolgate_search_refresh(ids bigint[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    old_lex text[];
    avgdl   double precision;
BEGIN
    IF ids IS NULL OR cardinality(ids) = 0 THEN
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock(7250004);

    -- remove what the tools contributed
    WITH gone AS (
        DELETE FROM search_postings WHERE tool_id = ANY (ids) RETURNING lexeme
    ), c AS (
        SELECT lexeme, count(*) AS n FROM gone GROUP BY lexeme
    ), dec AS (
        UPDATE search_lexemes l SET df = l.df - c.n FROM c WHERE l.lexeme = c.lexeme
        RETURNING l.lexeme, l.df
    )
    SELECT array_agg(lexeme) INTO old_lex FROM dec WHERE df = 0;
    -- delete the lexemes no document has any more
    IF old_lex IS NOT NULL THEN
        DELETE FROM search_lexemes WHERE lexeme = ANY (old_lex);
    END IF;
    WITH gone AS (
        DELETE FROM search_docs WHERE tool_id = ANY (ids) RETURNING doc_len
    )
    UPDATE search_corpus
       SET docs = docs - (SELECT count(*) FROM gone),
           total_len = total_len - (SELECT coalesce(sum(doc_len), 0) FROM gone);

    -- build the documents of the searchable tools among them
    INSERT INTO search_docs (tool_id, source_id, doc, doc_len, tags, name_keys)
    SELECT d.tool_id, d.source_id, d.doc,
           coalesce((SELECT sum(toolgate_field_weight(w))
                     FROM unnest(d.doc) u, unnest(u.weights) w), 0),
           d.tags, d.name_keys
    FROM (
        SELECT t.id AS tool_id, t.source_id,
               setweight(to_tsvector('english', toolgate_name_key(t.name) || ' ' || coalesce(t.title, '')), 'A')
            || setweight(to_tsvector('english', coalesce(
                   (SELECT string_agg(c.text, ' ' ORDER BY c.kind, c.ordinal) FROM tool_components c
                    WHERE c.tool_id = t.id
                      AND c.kind IN ('question', 'topics', 'profile_tags', 'profile_function')), '')), 'B')
            || setweight(to_tsvector('english', t.description || ' ' || coalesce(
                   (SELECT string_agg(c.text, ' ' ORDER BY c.ordinal) FROM tool_components c
                    WHERE c.tool_id = t.id AND c.kind = 'profile_when_to_use'), '')), 'C')
            || setweight(to_tsvector('english', coalesce(
                   (SELECT string_agg(toolgate_name_key(p.key) || ' ' || coalesce(p.value ->> 'description', ''), ' ')
                    FROM jsonb_each(CASE WHEN jsonb_typeof(t.input_schema -> 'properties') = 'object'
                                         THEN t.input_schema -> 'properties' ELSE '{}'::jsonb END) p), '')), 'D')
               AS doc,
               coalesce((SELECT array_agg(DISTINCT tag) FROM (
                   SELECT lower(btrim(x, E' \t\r\n"[]')) AS tag
                   FROM tool_components c, regexp_split_to_table(c.text, '[,;\n]') x
                   WHERE c.tool_id = t.id AND c.kind = 'profile_tags') s
                   WHERE tag <> ''), '{}') AS tags,
               ARRAY[toolgate_name_key(t.name), toolgate_name_key(t.original_name)] AS name_keys
        FROM tools t
        WHERE t.id = ANY (ids) AND t.enabled AND t.review_state = 'approved'
    ) d;

    UPDATE search_corpus
       SET docs = docs + s.n, total_len = total_len + s.len
      FROM (SELECT count(*) AS n, coalesce(sum(doc_len), 0) AS len
            FROM search_docs WHERE tool_id = ANY (ids)) s;
    SELECT CASE WHEN docs > 0 THEN total_len / docs ELSE 1 END INTO avgdl FROM search_corpus;

    INSERT INTO search_postings (lexeme, tool_id, source_id, tf, doc_len, impact)
    SELECT p.lexeme, p.tool_id, p.source_id, p.tf, p.doc_len,
           p.tf * 2.2 / (p.tf + 1.2 * (0.25 + 0.75 * p.doc_len / greatest(avgdl, 1e-9)))
    FROM (
        SELECT u.lexeme, d.tool_id, d.source_id, d.doc_len,
               (SELECT sum(toolgate_field_weight(w)) FROM unnest(u.weights) w) AS tf
        FROM search_docs d, unnest(d.doc) u
        WHERE d.tool_id = ANY (ids)
    ) p;

    INSERT INTO search_lexemes (lexeme, df)
    SELECT lexeme, count(*) FROM search_postings WHERE tool_id = ANY (ids)
    GROUP BY lexeme ORDER BY lexeme
    ON CONFLICT (lexeme) DO UPDATE SET df = search_lexemes.df + EXCLUDED.df;
END $$;

-- Recomputes the whole lexical index (e.g. to refresh every impact after the average
-- document length drifted): SELECT toolgate_search_reindex();
CREATE FUNCTION toolgate_search_reindex() RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    ids bigint[];
BEGIN
    SELECT array_agg(tool_id) INTO ids FROM search_docs;
    PERFORM toolgate_search_refresh(ids);
    SELECT array_agg(id) INTO ids FROM tools;
    PERFORM toolgate_search_refresh(ids);
    RETURN coalesce(cardinality(ids), 0);
END $$;

-- Statement-level triggers with transition tables: one refresh per statement, whatever the
-- number of rows. (A trigger with transition tables may have only one event, hence three
-- per table.)
CREATE FUNCTION toolgate_tools_lexical() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM toolgate_search_refresh(ARRAY(SELECT id FROM new_rows));
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM toolgate_search_refresh(ARRAY(SELECT id FROM old_rows));
    ELSE
        PERFORM toolgate_search_refresh(ARRAY(
            SELECT n.id FROM new_rows n JOIN old_rows o ON o.id = n.id
            WHERE (n.name, n.original_name, n.title, n.description, n.input_schema, n.enabled, n.review_state, n.source_id)
                  IS DISTINCT FROM
                  (o.name, o.original_name, o.title, o.description, o.input_schema, o.enabled, o.review_state, o.source_id)));
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER tools_lexical_insert AFTER INSERT ON tools
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION toolgate_tools_lexical();
CREATE TRIGGER tools_lexical_update AFTER UPDATE ON tools
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION toolgate_tools_lexical();
CREATE TRIGGER tools_lexical_delete AFTER DELETE ON tools
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION toolgate_tools_lexical();

CREATE FUNCTION toolgate_components_lexical() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    kinds constant text[] := ARRAY['question', 'topics', 'profile_tags', 'profile_function', 'profile_when_to_use'];
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM toolgate_search_refresh(ARRAY(SELECT DISTINCT tool_id FROM new_rows WHERE kind = ANY (kinds)));
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM toolgate_search_refresh(ARRAY(
            SELECT DISTINCT o.tool_id FROM old_rows o
            WHERE o.kind = ANY (kinds) AND EXISTS (SELECT 1 FROM search_docs d WHERE d.tool_id = o.tool_id)));
    ELSE
        PERFORM toolgate_search_refresh(ARRAY(
            SELECT DISTINCT n.tool_id FROM new_rows n JOIN old_rows o
              ON o.tool_id = n.tool_id AND o.kind = n.kind AND o.ordinal = n.ordinal
            WHERE (n.kind = ANY (kinds) OR o.kind = ANY (kinds)) AND n.text IS DISTINCT FROM o.text
            UNION
            SELECT n.tool_id FROM new_rows n
            WHERE n.kind = ANY (kinds)
              AND NOT EXISTS (SELECT 1 FROM old_rows o WHERE o.tool_id = n.tool_id AND o.kind = n.kind AND o.ordinal = n.ordinal)));
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER tool_components_lexical_insert AFTER INSERT ON tool_components
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION toolgate_components_lexical();
CREATE TRIGGER tool_components_lexical_update AFTER UPDATE ON tool_components
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION toolgate_components_lexical();
CREATE TRIGGER tool_components_lexical_delete AFTER DELETE ON tool_components
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION toolgate_components_lexical();

-- ---------------------------------------------------------------------------------------
-- Analytics over the retrieval log (see docs/analytics.md).

-- search_log.results holds, per returned tool in rank order,
-- {"name","score","lexical_rank","vector_rank","bm25","name_match"}.

-- Searches per day with latency percentiles (latency_ms: embedding + database time).
CREATE VIEW search_daily AS
SELECT date_trunc('day', created_at)::date AS day,
       count(*) AS searches,
       count(*) FILTER (WHERE result_count = 0) AS zero_result,
       round(avg(result_count)::numeric, 1) AS avg_results,
       round((percentile_cont(0.50) WITHIN GROUP (ORDER BY latency_ms))::numeric, 2) AS p50_ms,
       round((percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms))::numeric, 2) AS p95_ms,
       round((percentile_cont(0.99) WITHIN GROUP (ORDER BY latency_ms))::numeric, 2) AS p99_ms,
       round(max(latency_ms)::numeric, 2) AS max_ms
FROM search_log
GROUP BY 1;

-- Queries that found nothing, most frequent first.
CREATE VIEW search_zero_result_queries AS
SELECT query, count(*) AS searches, max(created_at) AS last_seen
FROM search_log
WHERE result_count = 0
GROUP BY query;

-- Searches whose best result is weak: in hybrid mode the top tool was found by one branch
-- only (the branches disagree: its fused score is at most 1/(k_rrf+1) with the default
-- k_rrf 60 and weights 1), or the top tool's BM25 score is below 1 (a weak keyword match).
CREATE VIEW search_low_score_queries AS
SELECT query, mode, count(*) AS searches,
       round(min(top_score)::numeric, 5) AS min_top_score,
       round(min((results -> 0 ->> 'bm25')::numeric), 3) AS min_top_bm25,
       max(created_at) AS last_seen
FROM search_log
WHERE result_count > 0
  AND ((mode = 'hybrid' AND top_score <= 1.0 / 61 + 1e-9)
       OR (mode <> 'vector' AND coalesce((results -> 0 ->> 'bm25')::float8, 0) < 1.0))
GROUP BY query, mode;

-- Per tool: how often it was returned, returned first, and called after a search.
CREATE VIEW search_tool_popularity AS
WITH returned AS (
    SELECT r.value ->> 'name' AS tool_name, count(*) AS returned,
           count(*) FILTER (WHERE r.pos = 1) AS returned_first
    FROM search_log l, jsonb_array_elements(l.results) WITH ORDINALITY AS r (value, pos)
    GROUP BY 1
), called AS (
    SELECT tool_name, count(*) AS called, count(*) FILTER (WHERE success) AS succeeded
    FROM search_feedback GROUP BY 1
)
SELECT coalesce(r.tool_name, c.tool_name) AS tool_name,
       coalesce(r.returned, 0) AS returned, coalesce(r.returned_first, 0) AS returned_first,
       coalesce(c.called, 0) AS called, coalesce(c.succeeded, 0) AS succeeded
FROM returned r FULL JOIN called c ON c.tool_name = r.tool_name;

-- The rank of each tool an agent called after a search (NULL when the search did not return it).
CREATE VIEW search_used_rank AS
SELECT f.search_id, l.created_at, coalesce(l.profile, '(active)') AS profile, l.mode, l.k,
       f.tool_name, f.success,
       (SELECT r.pos FROM jsonb_array_elements(l.results) WITH ORDINALITY AS r (value, pos)
        WHERE r.value ->> 'name' = f.tool_name) AS rank
FROM search_feedback f
JOIN search_log l ON l.id = f.search_id;

-- MRR and hit@k of the tools finally used, per weight profile and mode: compares profiles
-- on real traffic.
CREATE VIEW search_profile_quality AS
SELECT profile, mode, count(*) AS used,
       round(avg(coalesce(1.0 / rank, 0)), 4) AS mrr,
       round(avg(CASE WHEN rank = 1 THEN 1.0 ELSE 0 END), 4) AS hit_at_1,
       round(avg(CASE WHEN rank <= 3 THEN 1.0 ELSE 0 END), 4) AS hit_at_3,
       round(avg(CASE WHEN rank <= 5 THEN 1.0 ELSE 0 END), 4) AS hit_at_5,
       round(avg(CASE WHEN rank IS NOT NULL THEN 1.0 ELSE 0 END), 4) AS hit_at_k
FROM search_used_rank
GROUP BY profile, mode;

-- The slowest searches.
CREATE VIEW search_slowest AS
SELECT id, created_at, round(latency_ms::numeric, 2) AS latency_ms, timings, mode, k,
       result_count, left(query, 80) AS query
FROM search_log
ORDER BY latency_ms DESC NULLS LAST
LIMIT 100;
