-- Projects' settings and their sub-resources: environments, datasets, the users pool, processes,
-- integrations and feature files. Secret material is stored only as AES-GCM ciphertext
-- (impl/secrets); plain values never reach these tables.
ALTER TABLE projects ADD COLUMN settings jsonb NOT NULL DEFAULT '{}';

CREATE TABLE environments (
    id          uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id  uuid        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name        text        NOT NULL,
    base_url    text        NOT NULL DEFAULT '',
    description text        NOT NULL DEFAULT '',
    -- [{name, secret, value}] where value is plain text, or base64 ciphertext when secret.
    variables   jsonb       NOT NULL DEFAULT '[]',
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (project_id, name)
);

CREATE TABLE datasets (
    id         uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id uuid        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name       text        NOT NULL,
    format     text        NOT NULL CHECK (format IN ('csv', 'json')),
    size_bytes bigint      NOT NULL,
    row_count  int         NOT NULL,
    columns    jsonb       NOT NULL DEFAULT '[]',
    sha256     text        NOT NULL,
    -- Key of the content in the blob store (content-addressed: the sha256).
    blob_key   text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (project_id, name)
);

CREATE TABLE pool_accounts (
    id                uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id        uuid        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    username          text        NOT NULL,
    password_enc      bytea,
    tags              text[]      NOT NULL DEFAULT '{}',
    attributes        jsonb       NOT NULL DEFAULT '{}',
    environment       text,
    -- The lease: one running scenario holds the account until it releases it or the lease expires
    -- (its holder died without releasing; holders renew while they run).
    lease_run_id      uuid,
    lease_scenario_id uuid,
    leased_at         timestamptz,
    lease_expires_at  timestamptz,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    UNIQUE (project_id, username)
);
CREATE INDEX pool_accounts_lease_idx ON pool_accounts (lease_run_id) WHERE lease_run_id IS NOT NULL;

CREATE TABLE processes (
    id          uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id  uuid        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name        text        NOT NULL,
    description text        NOT NULL DEFAULT '',
    content     text        NOT NULL,
    parameters  text[]      NOT NULL DEFAULT '{}',
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (project_id, name)
);

CREATE TABLE integrations (
    project_id uuid        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    kind       text        NOT NULL CHECK (kind IN ('git', 'webhook')),
    enabled    boolean     NOT NULL DEFAULT true,
    -- Non-secret configuration (GitConfig / WebhookConfig members without the secret).
    config     jsonb       NOT NULL DEFAULT '{}',
    secret_enc bytea,
    last_test  jsonb,
    last_sync  jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, kind)
);

CREATE TABLE features (
    id             uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id     uuid        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    path           text        NOT NULL,
    module         text        NOT NULL DEFAULT '',
    content        text        NOT NULL,
    etag           text        NOT NULL,
    name           text,
    tags           text[]      NOT NULL DEFAULT '{}',
    scenario_count int         NOT NULL DEFAULT 0,
    size_bytes     int         NOT NULL,
    -- The etag of the content the last Git sync wrote; a local edit makes etag differ.
    synced_etag    text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (project_id, path)
);
