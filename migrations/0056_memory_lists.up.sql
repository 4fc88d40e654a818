-- Lists of a tenant's memories (an inverted file, docs/learning.md "How it works"): the
-- memory sweep splits each large tenant's memories into lists around centroids (k-means)
-- and the search statement's exact scan reads the lists whose centroids are nearest the
-- request, not every memory of the tenant (sql/queries/search.sql, CTE mem).
--
-- list is the memory's list, -1 for one not in a list yet (a tenant below the size that is
-- listed, or a memory embedded since its tenant was listed: the trigger sets -1 whenever the
-- embedding changes, and the next sweep files it). The search always reads list -1.
ALTER TABLE tool_memories ADD COLUMN list integer NOT NULL DEFAULT -1;

-- The centroids: unit vectors in the memories' space (cleared with the embeddings when the
-- space changes: toolgate_retype_memories).
CREATE TABLE tool_memory_lists (
    tenant   text NOT NULL,
    list     integer NOT NULL CHECK (list >= 0),
    centroid halfvec NOT NULL,
    PRIMARY KEY (tenant, list)
);

-- lists: how many lists the tenant's memories are in (0: none); listed: how many memories it
-- had when they were made (the sweep makes them again once the count doubles or halves).
ALTER TABLE tool_memory_tenants
    ADD COLUMN lists integer NOT NULL DEFAULT 0 CHECK (lists >= 0),
    ADD COLUMN listed integer NOT NULL DEFAULT 0 CHECK (listed >= 0);

CREATE OR REPLACE FUNCTION toolgate_unit_memory() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' OR NEW.embedding IS DISTINCT FROM OLD.embedding THEN
        IF NEW.embedding IS NOT NULL THEN
            NEW.embedding := l2_normalize(NEW.embedding);
        END IF;
        NEW.list := -1;
    END IF;
    RETURN NEW;
END $$;

-- The b-tree the exact scan reads becomes one on (tenant, list), so that a search reads the
-- lists it probes alone; past 1,024 dimensions, where an entry cannot hold the embedding, one
-- without it leads the scan to those rows of the table (later, sql/functions/memory.sql:
-- toolgate_index_memories).
DROP INDEX IF EXISTS tool_memories_tenant_embedding;
DO $$
DECLARE
    d integer;
BEGIN
    SELECT atttypmod INTO d FROM pg_attribute WHERE attrelid = 'tool_memories'::regclass AND attname = 'embedding';
    IF d BETWEEN 1 AND 1024 THEN
        CREATE INDEX tool_memories_tenant_list ON tool_memories (tenant, list) INCLUDE (tool_id, embedding);
    ELSIF d > 1024 THEN
        CREATE INDEX tool_memories_tenant_list ON tool_memories (tenant, list);
    END IF;
END $$;
