-- The audit log: every mutating request leaves one entry, written in the same transaction as the
-- change it records (refused and failed requests are recorded on their own). Never updated.
CREATE TABLE audit_entries (
    id          uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    at          timestamptz NOT NULL DEFAULT now(),
    actor_kind  text        NOT NULL CHECK (actor_kind IN ('user', 'token', 'anonymous', 'system')),
    actor_id    uuid,
    actor_name  text        NOT NULL DEFAULT '',
    operation   text        NOT NULL,
    method      text        NOT NULL DEFAULT '',
    path        text        NOT NULL DEFAULT '',
    status      integer     NOT NULL DEFAULT 0,
    outcome     text        NOT NULL CHECK (outcome IN ('success', 'denied', 'failed')),
    target_kind text        NOT NULL DEFAULT '',
    target_id   text        NOT NULL DEFAULT '',
    target_name text        NOT NULL DEFAULT '',
    client_addr text        NOT NULL DEFAULT '',
    request_id  text        NOT NULL DEFAULT '',
    detail      jsonb       NOT NULL DEFAULT '{}'::jsonb
);

CREATE INDEX audit_entries_at_idx ON audit_entries (at DESC, id DESC);
CREATE INDEX audit_entries_actor_idx ON audit_entries (actor_id, at DESC);
