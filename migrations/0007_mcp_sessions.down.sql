DROP TABLE IF EXISTS mcp_session_tools;
DROP TABLE IF EXISTS mcp_sessions;
