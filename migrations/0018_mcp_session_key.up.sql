-- MCP sessions are owned by the id of the key that opened them, not by its name: a revoked
-- key's name may be taken by a new key, which must not inherit its sessions. NULL is a
-- caller without a key (open mode). Rows stored before were owned by a name only, which
-- cannot tell the old key from a new one of that name: they are deleted, and their clients
-- get 404 and initialize anew, as after the retention job.
DELETE FROM mcp_sessions;
ALTER TABLE mcp_sessions ADD COLUMN caller_key_id bigint;
-- Revoking a key deletes its sessions.
CREATE INDEX mcp_sessions_caller_key ON mcp_sessions (caller_key_id) WHERE caller_key_id IS NOT NULL;
