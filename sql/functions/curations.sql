-- Curations (docs/curations.md): which query rules and synonyms a search applies. The
-- search statement (sql/queries/search.sql) and the statements that explain it call these,
-- so that a rule acts and is explained by one definition.
--
-- Applied after the migrations, whole (CREATE OR REPLACE).

-- A search's curation tenant is its caller's (auth.Caller.Tenant, passed to the statements
-- as their tenant parameter); NULL reads the global rules and synonyms alone.
DROP FUNCTION IF EXISTS toolgate_curation_tenant(bigint);

-- The words of a query or a pattern as rules compare them: lower-cased runs of letters,
-- digits and underscores, in order. One expression, with no FROM, so that the planner
-- inlines it where it is called: a SQL function it cannot inline is planned again on
-- every execution of the statement calling it (the search statement calls this one twice).
CREATE OR REPLACE FUNCTION toolgate_rule_words(txt text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT array_remove(regexp_split_to_array(lower(coalesce(txt, '')), '[^[:alnum:]_]+'), '')
$$;

-- The rules a search applies: the global ones and its tenant's (NULL: the global ones
-- alone), whose pattern matches the
-- query (exact: the same words in the same order; contains: every word of the pattern is a
-- word of the query). No regular expressions: a pattern is matched in time linear in the
-- query, whoever wrote it.
DROP FUNCTION IF EXISTS toolgate_search_rules(text, bigint);
CREATE OR REPLACE FUNCTION toolgate_search_rules(query text, tenant text)
RETURNS TABLE (id bigint, action text, tool text, boost double precision, "position" integer)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    WITH q AS (SELECT toolgate_rule_words(query) AS words)
    SELECT r.id, r.action, r.tool, r.boost, r.position
    FROM search_rules r, q
    WHERE (r.tenant IS NULL OR r.tenant = toolgate_search_rules.tenant)
      AND cardinality(q.words) > 0
      AND CASE r.match WHEN 'exact' THEN toolgate_rule_words(r.pattern) = q.words
                       ELSE q.words @> toolgate_rule_words(r.pattern) END
$$;

-- A query text with the synonyms of its words appended (the global ones and the tenant's,
-- NULL: the global ones alone), for the lexical analysis:
-- "mail invoice" with mail → {email} is searched as "mail invoice email". A text with no
-- synonym is returned unchanged. PL/pgSQL, not SQL: a SQL function with a FROM clause is
-- not inlined, and would be planned again on every search (0.2–0.3 ms, more than the
-- lookup); PL/pgSQL keeps its plan for the session.
DROP FUNCTION IF EXISTS toolgate_with_synonyms(text, bigint);
CREATE OR REPLACE FUNCTION toolgate_with_synonyms(txt text, tenant text) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
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
