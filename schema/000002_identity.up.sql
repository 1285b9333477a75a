-- Identity and hierarchy: users, sessions, API tokens, the one-time setup, the login throttle,
-- organisations, workspaces and their members.

CREATE TABLE users (
    id             uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    email          text        NOT NULL,
    display_name   text        NOT NULL,
    password_hash  text        NOT NULL, -- argon2id, PHC string format
    instance_admin boolean     NOT NULL DEFAULT false,
    disabled       boolean     NOT NULL DEFAULT false,
    last_login_at  timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

-- A single row, inserted by the first-run setup: its primary key makes the setup happen once,
-- whatever number of concurrent requests race for it.
CREATE TABLE instance_setup (
    singleton    boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
    admin_id     uuid        NOT NULL REFERENCES users (id),
    completed_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE sessions (
    id           uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    secret_hash  bytea       NOT NULL UNIQUE, -- SHA-256 of the cookie value; the value itself is never stored
    user_id      uuid        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    user_agent   text        NOT NULL DEFAULT '',
    client_addr  text        NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL
);
CREATE INDEX sessions_user_idx ON sessions (user_id, created_at DESC);

CREATE TABLE api_tokens (
    id           uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id      uuid        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         text        NOT NULL,
    prefix       text        NOT NULL, -- the first characters, to recognise a token in lists
    secret_hash  bytea       NOT NULL UNIQUE, -- SHA-256 of the token
    scopes       text[]      NOT NULL,
    expires_at   timestamptz,
    last_used_at timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now(),
    revoked_at   timestamptz
);
CREATE INDEX api_tokens_user_idx ON api_tokens (user_id, created_at DESC);

-- Failed logins per key ("account:<email>" or "addr:<client address>") in a sliding window.
CREATE TABLE login_failures (
    key          text        PRIMARY KEY,
    failures     integer     NOT NULL,
    window_start timestamptz NOT NULL,
    locked_until timestamptz
);

CREATE TABLE orgs (
    id         uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    slug       text        NOT NULL UNIQUE,
    name       text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- Org admins hold the admin role in every workspace of the org.
CREATE TABLE org_members (
    org_id     uuid        NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    user_id    uuid        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role       text        NOT NULL CHECK (role IN ('member', 'admin')),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, user_id)
);

CREATE TABLE workspaces (
    id          uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id      uuid        NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    slug        text        NOT NULL UNIQUE,
    name        text        NOT NULL,
    description text        NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE workspace_members (
    workspace_id uuid        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    user_id      uuid        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role         text        NOT NULL CHECK (role IN ('viewer', 'editor', 'admin')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX workspace_members_user_idx ON workspace_members (user_id);

-- Projects belong to a workspace; their slug addresses them (/api/projects/{slug}).
CREATE TABLE projects (
    id           uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id uuid        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    slug         text        NOT NULL UNIQUE,
    name         text        NOT NULL,
    description  text        NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX projects_workspace_idx ON projects (workspace_id);
