-- Back to one plain tool_vectors table with one HNSW index (when the space has a dimension
-- pgvector can index), keeping every row.
DROP TRIGGER IF EXISTS vector_sets_partition ON vector_sets;
DROP FUNCTION IF EXISTS toolgate_vector_sets_partition();

DO $$
DECLARE
    typ text;
    dims integer;
BEGIN
    SELECT format_type(atttypid, atttypmod), atttypmod INTO typ, dims
    FROM pg_attribute WHERE attrelid = 'tool_vectors'::regclass AND attname = 'embedding';
    ALTER TABLE tool_vectors RENAME TO tool_vectors_parted;
    ALTER INDEX tool_vectors_pkey RENAME TO tool_vectors_parted_pkey;
    ALTER INDEX tool_vectors_tool RENAME TO tool_vectors_parted_tool;
    EXECUTE format($f$
        CREATE TABLE tool_vectors (
            set_id    bigint NOT NULL REFERENCES vector_sets (id) ON DELETE CASCADE,
            tool_id   bigint NOT NULL REFERENCES tools (id) ON DELETE CASCADE,
            embedding %s NOT NULL,
            PRIMARY KEY (set_id, tool_id)
        )$f$, typ);
    INSERT INTO tool_vectors (set_id, tool_id, embedding)
    SELECT set_id, tool_id, embedding FROM tool_vectors_parted;
    DROP TABLE tool_vectors_parted;
    CREATE INDEX tool_vectors_tool ON tool_vectors (tool_id);
    IF dims BETWEEN 1 AND 2000 THEN
        SET LOCAL maintenance_work_mem = '256MB';
        CREATE INDEX tool_vectors_embedding_hnsw ON tool_vectors
            USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 32);
    END IF;
END $$;

DROP FUNCTION IF EXISTS toolgate_drop_vector_indexes();
DROP FUNCTION IF EXISTS toolgate_index_vector_partition(bigint);
DROP FUNCTION IF EXISTS toolgate_drop_vector_partition(bigint);
DROP FUNCTION IF EXISTS toolgate_create_vector_partition(bigint);
DROP FUNCTION IF EXISTS toolgate_vector_partition(bigint);
