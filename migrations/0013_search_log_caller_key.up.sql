-- The API key that made a search: only that key may report feedback on it
-- (POST /search/{id}/feedback). The key's id, not its name, which a new key may take once
-- the old one is revoked. NULL for searches made without a key: open mode, `toolgate mcp`
-- over stdio and internal callers, whose feedback is matched by caller name instead.
ALTER TABLE search_log ADD COLUMN caller_key_id bigint;
