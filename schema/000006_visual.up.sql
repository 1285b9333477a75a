-- Visual checks. A project's baseline of a name is kept per browser and viewport; the first capture
-- of a (name, browser, viewport) becomes the baseline at once, as pending review. Every check a run
-- makes is a visual_checks row with its three images (artifacts) and figures; accepting a run's
-- checks makes their actual images the baselines of the following runs.
CREATE TABLE visual_baselines (
    id             uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id     uuid        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name           text        NOT NULL,
    browser        text        NOT NULL,
    viewport       text        NOT NULL, -- "1280x800"
    status         text        NOT NULL CHECK (status IN ('pending', 'accepted')),
    media_type     text        NOT NULL,
    size_bytes     bigint      NOT NULL,
    sha256         text        NOT NULL,
    blob_key       text        NOT NULL,
    source_run_id  uuid        REFERENCES runs (id) ON DELETE SET NULL,
    accepted_by    uuid        REFERENCES users (id) ON DELETE SET NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (project_id, name, browser, viewport)
);

CREATE TABLE visual_checks (
    id                   uuid             PRIMARY KEY DEFAULT gen_random_uuid(),
    run_id               uuid             NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    project_id           uuid             NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    scenario_id          uuid             NOT NULL, -- run_scenarios.id
    step_index           integer          NOT NULL,
    name                 text             NOT NULL,
    browser              text             NOT NULL,
    viewport             text             NOT NULL,
    selector             text,
    status               text             NOT NULL CHECK (status IN ('passed', 'failed', 'pending', 'accepted')),
    actual_artifact_id   uuid             REFERENCES artifacts (id) ON DELETE SET NULL,
    expected_artifact_id uuid             REFERENCES artifacts (id) ON DELETE SET NULL,
    diff_artifact_id     uuid             REFERENCES artifacts (id) ON DELETE SET NULL,
    mismatch_pixels      bigint,           -- null: nothing to compare with (pending)
    mismatch_ratio       double precision NOT NULL DEFAULT 0,
    threshold            double precision NOT NULL DEFAULT 0,
    size_mismatch        boolean          NOT NULL DEFAULT false,
    created_at           timestamptz      NOT NULL DEFAULT now(),
    accepted_at          timestamptz,
    accepted_by          uuid             REFERENCES users (id) ON DELETE SET NULL
);
CREATE INDEX visual_checks_run_idx ON visual_checks (run_id, created_at, id);
