-- The memory indexes: the HNSW index of tool_memories.embedding and the b-tree on tenant and
-- list that holds it (docs/learning.md).
--
-- Applied after the migrations, whole (CREATE OR REPLACE).

-- Builds the memories' indexes for the column's dimension when they are missing: the HNSW
-- index (halfvec: 1..4,000 dimensions; larger spaces are searched exactly), and a b-tree on
-- tenant and list from which the memory branch's exact scan reads the lists it probes of a
-- small tenant's memories: up to 1,024 dimensions it holds each memory's tool and embedding,
-- so the scan does not visit the table (a b-tree entry holds at most about 2,700 bytes, 2 a
-- dimension); past that, the scan visits the table for the rows of those lists alone.
-- embed.setSpace drops them, re-types the column and calls this again. Returns whether the
-- HNSW index exists afterwards.
CREATE OR REPLACE FUNCTION toolgate_index_memories() RETURNS boolean
LANGUAGE plpgsql SET maintenance_work_mem = '256MB' AS $$
DECLARE
    dims integer;
BEGIN
    IF to_regclass('tool_memories') IS NULL THEN
        RETURN false; -- a schema before migration 0035
    END IF;
    SELECT atttypmod INTO dims FROM pg_attribute WHERE attrelid = 'tool_memories'::regclass AND attname = 'embedding';
    IF dims IS NULL OR dims < 1 THEN
        RETURN false;
    END IF;
    IF to_regclass('tool_memories_tenant_list') IS NULL THEN
        IF dims <= 1024 THEN
            CREATE INDEX tool_memories_tenant_list ON tool_memories (tenant, list) INCLUDE (tool_id, embedding);
        ELSE
            CREATE INDEX tool_memories_tenant_list ON tool_memories (tenant, list);
        END IF;
    END IF;
    IF dims > 4000 THEN
        RETURN false;
    END IF;
    IF to_regclass('tool_memories_hnsw') IS NULL THEN
        CREATE INDEX tool_memories_hnsw ON tool_memories USING hnsw (embedding halfvec_cosine_ops)
            WITH (m = 16, ef_construction = 32);
    END IF;
    RETURN true;
END $$;

-- Re-types the memories' embedding column to the embedding space's dimension and rebuilds its
-- index (embed.setSpace, with tool_vectors' column); keep drops the stored embeddings first
-- when false (a new space: the memory sweep embeds the texts again), and with them the
-- memories' lists (their centroids are of the old space; the trigger files every memory
-- under -1, and the sweep lists them again). Nothing on a schema before migration 0035.
CREATE OR REPLACE FUNCTION toolgate_retype_memories(dims integer, keep boolean) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF to_regclass('tool_memories') IS NULL THEN
        RETURN;
    END IF;
    IF NOT keep THEN
        UPDATE tool_memories SET embedding = NULL WHERE embedding IS NOT NULL;
        IF to_regclass('tool_memory_lists') IS NOT NULL THEN
            DELETE FROM tool_memory_lists;
            UPDATE tool_memory_tenants SET lists = 0, listed = 0 WHERE lists > 0;
        END IF;
    END IF;
    DROP INDEX IF EXISTS tool_memories_hnsw, tool_memories_tenant_embedding, tool_memories_tenant_list;
    EXECUTE format('ALTER TABLE tool_memories ALTER COLUMN embedding TYPE halfvec(%s)', dims);
    PERFORM toolgate_index_memories();
END $$;

-- What the memory sweep must do to a tenant's lists (internal/memory, Cluster; docs/
-- learning.md): 'make' them (from list_from memories on, 0 never: none yet, or the count
-- doubled or halved since they were made), 'drop' them (below list_from, or 0), 'file' the
-- memories embedded since they were made (list -1), or nothing (NULL). The one home of the
-- rule: the sweep picks its tenants by it and decides again by it once it holds the row.
CREATE OR REPLACE FUNCTION toolgate_memory_lists_action(tenant text, memories integer, lists integer,
                                                        listed integer, list_from integer)
RETURNS text LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN list_from > 0 AND memories >= list_from
             AND (lists = 0 OR memories >= 2 * listed OR 2 * memories <= listed) THEN 'make'
        WHEN lists > 0 AND (list_from = 0 OR memories < list_from) THEN 'drop'
        WHEN lists > 0 AND EXISTS (SELECT 1 FROM tool_memories m
                                   WHERE m.tenant = toolgate_memory_lists_action.tenant
                                     AND m.list = -1 AND m.embedding IS NOT NULL) THEN 'file'
    END
$$;
