-- Sets still waiting for their index get it now: without the column nothing would build it.
SELECT toolgate_index_vector_partition(id) FROM vector_sets WHERE index_deferred AND state = 'ready';
DROP TRIGGER IF EXISTS vector_sets_defer_index ON vector_sets;
DROP FUNCTION IF EXISTS toolgate_vector_sets_defer_index();
-- The partition trigger as it was before the column.
CREATE OR REPLACE FUNCTION toolgate_vector_sets_partition() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM toolgate_create_vector_partition(NEW.id);
        IF NEW.state = 'ready' THEN
            PERFORM toolgate_index_vector_partition(NEW.id);
        END IF;
        RETURN NEW;
    END IF;
    PERFORM toolgate_drop_vector_partition(OLD.id);
    RETURN OLD;
END $$;
ALTER TABLE vector_sets DROP COLUMN index_deferred;
