DROP INDEX IF EXISTS mcp_sessions_caller_key;
ALTER TABLE mcp_sessions DROP COLUMN IF EXISTS caller_key_id;
