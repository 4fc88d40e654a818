-- Back to the trigger-maintained index of migration 0004: the objects of
-- sql/functions/lexical.sql go, the 0004 tables, functions and triggers come back, and the
-- index is rebuilt.
DROP TRIGGER IF EXISTS tools_search_queue_insert ON tools;
DROP TRIGGER IF EXISTS tools_search_queue_update ON tools;
DROP TRIGGER IF EXISTS tools_search_queue_delete ON tools;
DROP TRIGGER IF EXISTS tool_components_search_queue_insert ON tool_components;
DROP TRIGGER IF EXISTS tool_components_search_queue_update ON tool_components;
DROP TRIGGER IF EXISTS tool_components_search_queue_delete ON tool_components;
DROP FUNCTION IF EXISTS toolgate_tools_search_queue();
DROP FUNCTION IF EXISTS toolgate_components_search_queue();
DROP FUNCTION IF EXISTS toolgate_search_index(integer);
DROP FUNCTION IF EXISTS toolgate_search_reimpact(bigint, integer, double precision);
DROP FUNCTION IF EXISTS toolgate_search_refresh(bigint[]);
DROP FUNCTION IF EXISTS toolgate_search_document(bigint[]);
DROP FUNCTION IF EXISTS toolgate_search_write_postings(bigint[], double precision);
DROP FUNCTION IF EXISTS toolgate_bm25_impact(real, real, double precision);
DROP TABLE schema_functions;
DROP TABLE search_queue;

ALTER TABLE search_corpus DROP COLUMN impact_avgdl, DROP COLUMN name_words;
TRUNCATE search_docs, search_lexemes;
UPDATE search_corpus SET docs = 0, total_len = 0;
ALTER TABLE search_docs DROP COLUMN lexemes, DROP COLUMN tfs, ADD COLUMN doc tsvector NOT NULL;
CREATE INDEX search_docs_doc ON search_docs USING gin (doc);
DROP TABLE search_postings;
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

SELECT toolgate_search_reindex();
