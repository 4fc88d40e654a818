-- The memories' embeddings are stored at half precision (pgvector's halfvec, 2 bytes a
-- dimension), and a b-tree on tenant holds each memory's tool and embedding up to 1,024
-- dimensions, so that the memory branch's exact scan of a tenant's memories reads that
-- index alone, not a table page per memory (sql/queries/search.sql, CTE mem). Their HNSW
-- index indexes halfvec up to 4,000 dimensions (vector: 2,000). What is in force later is
-- sql/functions/memory.sql (toolgate_index_memories, toolgate_retype_memories); this
-- migration does the same once, on the column as it is.
DROP INDEX IF EXISTS tool_memories_hnsw;
DO $$
DECLARE
    d integer;
BEGIN
    SELECT atttypmod INTO d FROM pg_attribute WHERE attrelid = 'tool_memories'::regclass AND attname = 'embedding';
    IF d IS NULL OR d < 1 THEN
        ALTER TABLE tool_memories ALTER COLUMN embedding TYPE halfvec USING embedding::halfvec;
        RETURN;
    END IF;
    EXECUTE format('ALTER TABLE tool_memories ALTER COLUMN embedding TYPE halfvec(%s) USING embedding::halfvec(%s)', d, d);
    IF d <= 4000 THEN
        CREATE INDEX tool_memories_hnsw ON tool_memories USING hnsw (embedding halfvec_cosine_ops)
            WITH (m = 16, ef_construction = 32);
    END IF;
    IF d <= 1024 THEN
        CREATE INDEX tool_memories_tenant_embedding ON tool_memories (tenant) INCLUDE (tool_id, embedding);
    END IF;
END $$;
