-- The partitions of tool_vectors: one per vector set (docs/profiles.md).
--
-- Applied after the migrations by internal/postgres.MigrateUp, whole, whenever its content
-- changed or a migration ran: every statement here must be re-runnable (CREATE OR REPLACE).
-- Migration 0008 made tool_vectors a partitioned table and the first copy of these functions
-- (it needed them to move the existing rows); this file is their live definition.
--
-- The partition of set N is the table tool_vectors_s<N>. Creating a vector_sets row creates
-- and attaches its partition (trigger below), deleting the row drops it: every path that
-- makes or removes a set keeps the two in step.

-- The partition of a vector set. The existing partitions carry the names it gave: changing it
-- would lose them (no index or generated column uses it).
CREATE OR REPLACE FUNCTION toolgate_vector_partition(set_id bigint) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT 'tool_vectors_s' || set_id $$;

-- Creates the set's partition as a plain table and attaches it: ATTACH PARTITION takes only
-- SHARE UPDATE EXCLUSIVE on tool_vectors (searches and writers go on), where CREATE TABLE
-- ... PARTITION OF would take ACCESS EXCLUSIVE. The new table is empty, so attaching it
-- scans nothing; its primary key and tool_id indexes are made by the attach.
CREATE OR REPLACE FUNCTION toolgate_create_vector_partition(p_set bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('CREATE TABLE %I (LIKE tool_vectors INCLUDING DEFAULTS)', toolgate_vector_partition(p_set));
    EXECUTE format('ALTER TABLE tool_vectors ATTACH PARTITION %I FOR VALUES IN (%s)',
                   toolgate_vector_partition(p_set), p_set);
END $$;

-- Builds the HNSW index of the set's partition when it has none and the embedding space has a
-- dimension pgvector can index (1..2000; larger spaces are searched exactly). Returns whether
-- the partition has an HNSW index afterwards. The build gets 256 MB of maintenance memory
-- (the graph fits; this setting is scoped to the function call).
CREATE OR REPLACE FUNCTION toolgate_index_vector_partition(p_set bigint) RETURNS boolean
LANGUAGE plpgsql SET maintenance_work_mem = '256MB' AS $$
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

-- Drops the set's partition, rows and index with it. Dropping an attached partition takes
-- ACCESS EXCLUSIVE on tool_vectors for the moment of the drop (the caller bounds the wait
-- with lock_timeout); it takes no lock on tools or vector_sets, whereas dropping a detached
-- partition would (its foreign keys become the table's own).
CREATE OR REPLACE FUNCTION toolgate_drop_vector_partition(p_set bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('DROP TABLE IF EXISTS %I', toolgate_vector_partition(p_set));
END $$;

-- Drops the HNSW index of every partition (before the column is re-typed by a reembed).
CREATE OR REPLACE FUNCTION toolgate_drop_vector_indexes() RETURNS void
LANGUAGE plpgsql AS $$
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

-- A new set gets its partition; a new ready set (a profile's first set, made by enrichment)
-- also gets its index at once, since its vectors are written one tool at a time, unless its
-- index is deferred (index_deferred: the vector_index job builds it in bulk once the
-- enrichment burst is over). A building set (a re-weight) gets its index when the build is
-- complete. A deleted set loses its partition (a re-weight drops it first, so this is then a
-- no-op).
CREATE OR REPLACE FUNCTION toolgate_vector_sets_partition() RETURNS trigger
LANGUAGE plpgsql AS $$
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

CREATE OR REPLACE TRIGGER vector_sets_partition AFTER INSERT OR DELETE ON vector_sets
    FOR EACH ROW EXECUTE FUNCTION toolgate_vector_sets_partition();

-- A new ready set of a profile that is not active (a profile's first set, made while a new
-- catalog is enriched) defers its HNSW index (migration 0024): it receives every tool's
-- vector without one, and the vector_index job builds it in one CREATE INDEX after the
-- enrichment burst. Inserting each tool into the graphs of every profile one by one was most
-- of the cost of enriching a catalog; the active profile's searches keep their index.
CREATE OR REPLACE FUNCTION toolgate_vector_sets_defer_index() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.state = 'ready' AND NOT EXISTS (SELECT 1 FROM weight_profiles p WHERE p.id = NEW.profile_id AND p.is_active) THEN
        NEW.index_deferred := true;
    END IF;
    RETURN NEW;
END $$;

CREATE OR REPLACE TRIGGER vector_sets_defer_index BEFORE INSERT ON vector_sets
    FOR EACH ROW EXECUTE FUNCTION toolgate_vector_sets_defer_index();
