DROP TABLE IF EXISTS memory_sweep;
DROP TABLE IF EXISTS tool_memory_forgets;
DROP TABLE IF EXISTS tool_memories;
ALTER TABLE api_keys DROP COLUMN IF EXISTS tenant;
