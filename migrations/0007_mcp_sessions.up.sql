-- MCP gateway sessions and the tools bound into each, so that any toolgate instance behind a
-- load balancer can serve a session another instance created.
CREATE TABLE mcp_sessions (
    id           text PRIMARY KEY,
    -- the API key name (or "open" / "stdio") that created the session; only it may use the session.
    caller       text NOT NULL,
    -- the sources that caller may use; NULL means every source.
    sources      text[],
    -- the MCP session state after the initialize handshake (go-sdk ServerSessionState JSON).
    state        jsonb NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mcp_sessions_last_seen ON mcp_sessions (last_seen_at);

-- The tools find_tools bound into a session's tool list, newest bound_at first; the oldest
-- are dropped past the binding limit. tool_name is text: a binding outlives a deleted tool,
-- which then simply no longer appears in the session's list.
CREATE TABLE mcp_session_tools (
    session_id text NOT NULL REFERENCES mcp_sessions (id) ON DELETE CASCADE,
    tool_name  text NOT NULL,
    bound_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (session_id, tool_name)
);
