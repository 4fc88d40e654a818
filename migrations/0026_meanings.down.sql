DROP TABLE tool_meanings;

DROP FUNCTION IF EXISTS toolgate_search_index(integer);
-- as 0011_lexical_v2 made it
CREATE FUNCTION toolgate_search_index(max_tools integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    ids bigint[];
BEGIN
    PERFORM pg_advisory_xact_lock(7250011);
    SELECT array_agg(DISTINCT q.tool_id) INTO ids
    FROM (SELECT tool_id FROM search_queue ORDER BY id LIMIT max_tools) q;
    IF ids IS NULL THEN
        RETURN 0;
    END IF;
    DELETE FROM search_queue WHERE tool_id = ANY (ids);
    PERFORM toolgate_search_refresh(ids);
    RETURN cardinality(ids);
END $$;
