-- Runs and what they produce. A run is claimed by one worker (SELECT … FOR UPDATE SKIP LOCKED), which
-- keeps heartbeat_at fresh while it executes; a run whose heartbeat went stale lost its worker and
-- is reconciled to errored. Events are numbered per run (seq) and kept for replay (SSE history).
CREATE TABLE runs (
    id               uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id       uuid        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    status           text        NOT NULL CHECK (status IN ('queued', 'running', 'passed', 'failed', 'errored', 'cancelled', 'timed_out')),
    trigger          text        NOT NULL DEFAULT 'api' CHECK (trigger IN ('ui', 'api', 'schedule', 'process', 'integration', 'mcp', 'agent')),
    source           text        NOT NULL DEFAULT 'execute' CHECK (source IN ('execute', 'ingest')),
    label            text,
    paths            text[]      NOT NULL DEFAULT '{}',
    tags             text,
    environment      text,
    branch           text,
    commit_sha       text,
    variables        jsonb       NOT NULL DEFAULT '{}',
    datasets         jsonb       NOT NULL DEFAULT '{}',
    process_name     text,
    schedule_id      uuid,
    retries          integer     NOT NULL DEFAULT 0,
    timeout_seconds  integer     NOT NULL DEFAULT 3600,
    created_by       uuid        REFERENCES users (id) ON DELETE SET NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    started_at       timestamptz,
    finished_at      timestamptz,
    worker_id        text,
    heartbeat_at     timestamptz,
    cancel_requested boolean     NOT NULL DEFAULT false,
    error            text,
    counts           jsonb       NOT NULL DEFAULT '{}',
    last_seq         bigint      NOT NULL DEFAULT 0
);
CREATE INDEX runs_queued_idx ON runs (created_at) WHERE status = 'queued';
CREATE INDEX runs_running_idx ON runs (heartbeat_at) WHERE status = 'running';
CREATE INDEX runs_project_idx ON runs (project_id, created_at DESC, id DESC);
CREATE INDEX runs_created_idx ON runs (created_at DESC, id DESC);

CREATE TABLE run_scenarios (
    id           uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    run_id       uuid        NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    scenario_key text        NOT NULL, -- the runner's id: stable across runs of the same sources
    position     integer     NOT NULL,
    module       text        NOT NULL,
    feature_path text        NOT NULL,
    feature_name text        NOT NULL DEFAULT '',
    name         text        NOT NULL,
    line         integer     NOT NULL,
    tags         text[]      NOT NULL DEFAULT '{}',
    example_row  integer,
    status       text        NOT NULL,
    error        jsonb,
    attempts     integer     NOT NULL DEFAULT 1,
    started_at   timestamptz,
    finished_at  timestamptz,
    duration_ms  bigint,
    steps        jsonb       NOT NULL DEFAULT '[]', -- the API's RunStep list
    UNIQUE (run_id, scenario_key)
);
CREATE INDEX run_scenarios_key_idx ON run_scenarios (scenario_key, run_id);

CREATE TABLE run_events (
    run_id uuid        NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq    bigint      NOT NULL,
    at     timestamptz NOT NULL DEFAULT now(),
    type   text        NOT NULL,
    data   jsonb       NOT NULL, -- the API's RunEvent
    PRIMARY KEY (run_id, seq)
);

CREATE TABLE artifacts (
    id           uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    run_id       uuid        REFERENCES runs (id) ON DELETE CASCADE,
    project_id   uuid        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    scenario_key text,
    step_index   integer,
    name         text        NOT NULL,
    kind         text        NOT NULL,
    media_type   text        NOT NULL,
    size_bytes   bigint      NOT NULL,
    sha256       text        NOT NULL,
    blob_key     text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX artifacts_run_idx ON artifacts (run_id);

-- Self-healing locators: for each selector a project's passing scenarios used, the element's
-- alternatives (test id, id, role, text, label, attributes), tried when the selector stops matching.
CREATE TABLE locator_alternatives (
    project_id   uuid        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    selector     text        NOT NULL,
    alternatives jsonb       NOT NULL,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, selector)
);
