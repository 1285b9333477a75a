-- MCP sessions of protocol revisions before 2026-07-28 (initialize, Mcp-Session-Id, DELETE). They
-- live here so that any sdods process behind a load balancer serves a session another one opened.
-- The id is kept as its SHA-256 only; a session is bound to the user who opened it.
CREATE TABLE mcp_sessions (
    id_hash      bytea       PRIMARY KEY,
    user_id      uuid        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    ended_at     timestamptz
);

CREATE INDEX mcp_sessions_last_seen_idx ON mcp_sessions (last_seen_at);
