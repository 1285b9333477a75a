-- Agent jobs and proposals (docs/agents.md). A job is worked by a River job of kind agent_job;
-- its row here is what the API shows, its events are stored like run events and announced with
-- NOTIFY sdods_agent_events. A proposal is immutable but for its state and decision.
CREATE TABLE agent_jobs (
    id               uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id       uuid        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    kind             text        NOT NULL,
    status           text        NOT NULL DEFAULT 'queued'
                     CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    input            jsonb       NOT NULL DEFAULT '{}',
    max_seconds      integer     NOT NULL CHECK (max_seconds > 0),
    max_tokens       integer     CHECK (max_tokens IS NULL OR max_tokens > 0),
    tokens_used      integer     NOT NULL DEFAULT 0,
    progress         integer     NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 100),
    summary          text,
    error            text,
    cancel_requested boolean     NOT NULL DEFAULT false,
    worker_id        text,
    heartbeat_at     timestamptz,
    last_seq         bigint      NOT NULL DEFAULT 0,
    actor_kind       text        NOT NULL,
    actor_id         uuid,
    actor_name       text        NOT NULL,
    created_by       uuid        REFERENCES users (id) ON DELETE SET NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    started_at       timestamptz,
    finished_at      timestamptz
);
CREATE INDEX agent_jobs_project_idx ON agent_jobs (project_id, created_at DESC);
CREATE INDEX agent_jobs_running_idx ON agent_jobs (heartbeat_at) WHERE status = 'running';

CREATE TABLE agent_job_events (
    job_id uuid        NOT NULL REFERENCES agent_jobs (id) ON DELETE CASCADE,
    seq    bigint      NOT NULL,
    at     timestamptz NOT NULL DEFAULT now(),
    type   text        NOT NULL,
    data   jsonb       NOT NULL, -- the API's AgentJobEvent
    PRIMARY KEY (job_id, seq)
);

CREATE TABLE proposals (
    id          uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id  uuid        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    job_id      uuid        REFERENCES agent_jobs (id) ON DELETE SET NULL,
    kind        text        NOT NULL CHECK (kind IN ('feature_patch', 'baseline_update', 'quarantine', 'classification')),
    status      text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'verified', 'accepted', 'rejected', 'stale')),
    title       text        NOT NULL,
    target      jsonb       NOT NULL DEFAULT '{}',
    diff        text,
    evidence    jsonb       NOT NULL DEFAULT '{}',
    confidence  real        NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    decided_by  uuid        REFERENCES users (id) ON DELETE SET NULL,
    decided_at  timestamptz,
    reason      text,
    -- A feature patch's whole patched content (the diff is what people read).
    content_after       text,
    -- The run that executed the patched scenario (verification before accept).
    verification_run_id uuid REFERENCES runs (id) ON DELETE SET NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    CHECK (status <> 'rejected' OR reason IS NOT NULL)
);
CREATE INDEX proposals_project_idx ON proposals (project_id, created_at DESC);
CREATE INDEX proposals_job_idx ON proposals (job_id);

-- A verification run executes these contents instead of the saved features of the same paths.
CREATE TABLE run_feature_overrides (
    run_id  uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    path    text NOT NULL,
    content text NOT NULL,
    PRIMARY KEY (run_id, path)
);

-- An agent job is an actor of the audit log: what it writes on its own is recorded as 'agent'.
ALTER TABLE audit_entries DROP CONSTRAINT audit_entries_actor_kind_check,
    ADD CONSTRAINT audit_entries_actor_kind_check CHECK (actor_kind IN ('user', 'token', 'anonymous', 'system', 'agent'));
