DROP TABLE IF EXISTS tool_memory_tenants;
DROP INDEX IF EXISTS tool_memories_tenant;
