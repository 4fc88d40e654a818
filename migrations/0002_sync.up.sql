-- Sync of MCP sources: a sync run also counts the changed tools it held back for review.
ALTER TABLE sync_runs ADD COLUMN pending integer NOT NULL DEFAULT 0;
