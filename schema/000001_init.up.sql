-- The audit log: every write through the API leaves one entry. Entries are never updated.
CREATE TABLE audit_entries (
    id          uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    at          timestamptz NOT NULL DEFAULT now(),
    actor_id    uuid,
    actor_label text        NOT NULL,
    action      text        NOT NULL,
    target_type text        NOT NULL DEFAULT '',
    target_id   text        NOT NULL DEFAULT '',
    request_id  text        NOT NULL DEFAULT '',
    details     jsonb       NOT NULL DEFAULT '{}'::jsonb
);

CREATE INDEX audit_entries_at_idx ON audit_entries (at DESC, id DESC);
CREATE INDEX audit_entries_actor_idx ON audit_entries (actor_id, at DESC);
