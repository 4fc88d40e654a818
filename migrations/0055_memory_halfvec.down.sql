-- Back to single-precision embeddings, with the HNSW index of migration 0035 (up to 2,000
-- dimensions) and without the b-tree that holds them.
DROP INDEX IF EXISTS tool_memories_tenant_embedding;
DROP INDEX IF EXISTS tool_memories_hnsw;
DO $$
DECLARE
    d integer;
BEGIN
    SELECT atttypmod INTO d FROM pg_attribute WHERE attrelid = 'tool_memories'::regclass AND attname = 'embedding';
    IF d IS NULL OR d < 1 THEN
        ALTER TABLE tool_memories ALTER COLUMN embedding TYPE vector USING embedding::vector;
        RETURN;
    END IF;
    EXECUTE format('ALTER TABLE tool_memories ALTER COLUMN embedding TYPE vector(%s) USING embedding::vector(%s)', d, d);
    IF d <= 2000 THEN
        CREATE INDEX tool_memories_hnsw ON tool_memories USING hnsw (embedding vector_cosine_ops)
            WITH (m = 16, ef_construction = 32);
    END IF;
END $$;
