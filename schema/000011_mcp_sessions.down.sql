DROP TABLE IF EXISTS mcp_sessions;
