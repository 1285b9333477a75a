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

-- A failed or pending visual check is a baseline_update item of the review inbox; rejecting it
-- is recorded here (accepting it is the baselines accept of impl/server/runs/visual.go).
CREATE TABLE visual_check_rejections (
    check_id   uuid        PRIMARY KEY REFERENCES visual_checks (id) ON DELETE CASCADE,
    reason     text        NOT NULL,
    decided_by uuid        REFERENCES users (id) ON DELETE SET NULL,
    decided_at timestamptz NOT NULL DEFAULT now()
);

-- An agent job is an actor of the audit log: what it writes on its own is recorded as 'agent'.
ALTER TABLE audit_entries DROP CONSTRAINT audit_entries_actor_kind_check,
    ADD CONSTRAINT audit_entries_actor_kind_check CHECK (actor_kind IN ('user', 'token', 'anonymous', 'system', 'agent'));

-- The review inbox (GET /api/proposals): agent proposals, and visual checks as baseline updates.
CREATE VIEW inbox_items AS
SELECT pr.id, pr.project_id, pr.job_id, pr.kind, pr.status, pr.title, pr.target, pr.diff, pr.evidence, pr.confidence,
       pr.decided_by, pr.decided_at, pr.reason, pr.created_at, pr.updated_at, p.slug AS project_slug, p.workspace_id
FROM proposals pr JOIN projects p ON p.id = pr.project_id
UNION ALL
SELECT c.id, c.project_id, NULL::uuid, 'baseline_update',
       CASE WHEN c.status = 'accepted' THEN 'accepted' WHEN rj.check_id IS NOT NULL THEN 'rejected' ELSE 'pending' END,
       'visual baseline ' || c.name || ' (' || c.browser || ', ' || c.viewport || ')',
       jsonb_build_object('baseline', c.name, 'runId', c.run_id),
       NULL::text,
       jsonb_build_object('visualCheckId', c.id, 'check', c.status, 'browser', c.browser, 'viewport', c.viewport, 'selector', c.selector,
                          'mismatchPixels', c.mismatch_pixels, 'mismatchRatio', c.mismatch_ratio, 'threshold', c.threshold,
                          'sizeMismatch', c.size_mismatch, 'actualArtifactId', c.actual_artifact_id,
                          'expectedArtifactId', c.expected_artifact_id, 'diffArtifactId', c.diff_artifact_id),
       -- How sure the difference is real: a new baseline (nothing to compare) is a coin toss.
       (CASE WHEN c.mismatch_pixels IS NULL THEN 0.5 ELSE least(1, 0.5 + c.mismatch_ratio * 5) END)::real,
       coalesce(c.accepted_by, rj.decided_by), coalesce(c.accepted_at, rj.decided_at), rj.reason, c.created_at,
       coalesce(c.accepted_at, rj.decided_at, c.created_at), p.slug, p.workspace_id
FROM visual_checks c JOIN projects p ON p.id = c.project_id LEFT JOIN visual_check_rejections rj ON rj.check_id = c.id
WHERE c.status IN ('failed', 'pending', 'accepted');

-- The llm kind's endpoint (one per instance); the key is sealed (impl/server/secrets).
CREATE TABLE agent_llm_config (
    singleton  boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
    enabled    boolean     NOT NULL,
    endpoint   text        NOT NULL,
    model      text        NOT NULL,
    key_sealed text,
    include    text[]      NOT NULL DEFAULT '{failingStep,message}',
    updated_by uuid        REFERENCES users (id) ON DELETE SET NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
