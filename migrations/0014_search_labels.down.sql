DROP VIEW IF EXISTS search_label_stats;
DROP TRIGGER IF EXISTS search_feedback_label ON search_feedback;
DROP FUNCTION IF EXISTS toolgate_feedback_label();
DROP TABLE IF EXISTS search_labels;
-- toolgate_drop_search_log_partitions as migration 0001 made it.
CREATE OR REPLACE FUNCTION toolgate_drop_search_log_partitions(keep interval) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    r       record;
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
        EXECUTE format('DROP TABLE %I', r.relname);
        dropped := dropped + 1;
    END LOOP;
    RETURN dropped;
END $$;
