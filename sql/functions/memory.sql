-- The memory index: the HNSW index of tool_memories.embedding (docs/learning.md).
--
-- Applied after the migrations, whole (CREATE OR REPLACE).

-- Builds the HNSW index of the memories' embeddings when there is none and the column is
-- typed with a dimension pgvector can index (1..2000; larger spaces are searched exactly).
-- embed.setSpace drops it, re-types the column and calls this again. Returns whether the
-- index exists afterwards.
CREATE OR REPLACE FUNCTION toolgate_index_memories() RETURNS boolean
LANGUAGE plpgsql SET maintenance_work_mem = '256MB' AS $$
DECLARE
    dims integer;
BEGIN
    IF to_regclass('tool_memories') IS NULL THEN
        RETURN false; -- a schema before migration 0035
    END IF;
    IF to_regclass('tool_memories_hnsw') IS NOT NULL THEN
        RETURN true;
    END IF;
    SELECT atttypmod INTO dims FROM pg_attribute WHERE attrelid = 'tool_memories'::regclass AND attname = 'embedding';
    IF dims IS NULL OR dims < 1 OR dims > 2000 THEN
        RETURN false;
    END IF;
    CREATE INDEX tool_memories_hnsw ON tool_memories USING hnsw (embedding vector_cosine_ops)
        WITH (m = 16, ef_construction = 32);
    RETURN true;
END $$;

-- Re-types the memories' embedding column to the embedding space's dimension and rebuilds its
-- index (embed.setSpace, with tool_vectors' column); keep drops the stored embeddings first
-- when false (a new space: the memory sweep embeds the texts again). Nothing on a schema
-- before migration 0035.
CREATE OR REPLACE FUNCTION toolgate_retype_memories(dims integer, keep boolean) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF to_regclass('tool_memories') IS NULL THEN
        RETURN;
    END IF;
    IF NOT keep THEN
        UPDATE tool_memories SET embedding = NULL WHERE embedding IS NOT NULL;
    END IF;
    DROP INDEX IF EXISTS tool_memories_hnsw;
    EXECUTE format('ALTER TABLE tool_memories ALTER COLUMN embedding TYPE vector(%s)', dims);
    PERFORM toolgate_index_memories();
END $$;
