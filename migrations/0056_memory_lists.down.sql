DROP INDEX IF EXISTS tool_memories_tenant_list;
CREATE OR REPLACE FUNCTION toolgate_unit_memory() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.embedding IS NOT NULL AND (TG_OP = 'INSERT' OR NEW.embedding IS DISTINCT FROM OLD.embedding) THEN
        NEW.embedding := l2_normalize(NEW.embedding);
    END IF;
    RETURN NEW;
END $$;
ALTER TABLE tool_memory_tenants DROP COLUMN lists, DROP COLUMN listed;
DROP TABLE tool_memory_lists;
ALTER TABLE tool_memories DROP COLUMN list;
DO $$
DECLARE
    d integer;
BEGIN
    SELECT atttypmod INTO d FROM pg_attribute WHERE attrelid = 'tool_memories'::regclass AND attname = 'embedding';
    IF d BETWEEN 1 AND 1024 THEN
        CREATE INDEX tool_memories_tenant_embedding ON tool_memories (tenant) INCLUDE (tool_id, embedding);
    END IF;
END $$;
