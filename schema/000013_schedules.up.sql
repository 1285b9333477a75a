-- Schedules start runs on a cron cadence in a time zone. A firing is identified by (schedule id,
-- scheduled time): the unique index below makes a scheduled time fire at most once whatever the number
-- of sdods processes, and the firing row is inserted in the transaction that creates its run, so a
-- process dying mid-firing leaves neither. next_fire_at is the next scheduled time not yet handled
-- (the cursor); next_due_at is when it becomes due (the scheduled time plus its jitter).
CREATE TABLE schedules (
    id                      uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id              uuid        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name                    text        NOT NULL,
    cron                    text        NOT NULL,
    timezone                text        NOT NULL DEFAULT 'UTC',
    template                jsonb       NOT NULL DEFAULT '{}', -- the API's RunTemplate
    overlap                 text        NOT NULL DEFAULT 'skip'
                                        CHECK (overlap IN ('skip', 'buffer_one', 'buffer_all', 'cancel_other', 'allow_all')),
    catch_up_window_seconds integer     NOT NULL DEFAULT 0 CHECK (catch_up_window_seconds >= 0),
    catch_up_max            integer     NOT NULL DEFAULT 10 CHECK (catch_up_max >= 1),
    jitter_seconds          integer     NOT NULL DEFAULT 0 CHECK (jitter_seconds >= 0),
    start_at                timestamptz,
    end_at                  timestamptz,
    status                  text        NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused')),
    paused_at               timestamptz,
    paused_by               uuid        REFERENCES users (id) ON DELETE SET NULL,
    pause_note              text,
    pause_after_failures    integer     CHECK (pause_after_failures >= 1),
    -- Consecutive failures count scheduled runs created after this time (creation, resume).
    failures_since          timestamptz NOT NULL DEFAULT now(),
    next_fire_at            timestamptz,
    next_due_at             timestamptz,
    created_by              uuid        REFERENCES users (id) ON DELETE SET NULL,
    created_at              timestamptz NOT NULL DEFAULT now(),
    updated_at              timestamptz NOT NULL DEFAULT now(),
    UNIQUE (project_id, name)
);
CREATE INDEX schedules_due_idx ON schedules (next_due_at) WHERE status = 'active';

CREATE TABLE schedule_firings (
    id                uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    schedule_id       uuid        NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
    scheduled_time    timestamptz NOT NULL,
    manual            boolean     NOT NULL DEFAULT false,
    status            text        NOT NULL CHECK (status IN ('started', 'buffered', 'missed')),
    reason            text        NOT NULL,
    -- A missed record may stand for a run of consecutive scheduled times (long downtime, long pause).
    missed_count      integer     NOT NULL DEFAULT 1 CHECK (missed_count >= 1),
    last_time         timestamptz,
    run_id            uuid        REFERENCES runs (id) ON DELETE SET NULL,
    fired_by          text        NOT NULL DEFAULT '', -- the process (worker id) that recorded it
    recorded_at       timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX schedule_firings_once ON schedule_firings (schedule_id, scheduled_time) WHERE NOT manual;
CREATE INDEX schedule_firings_recent_idx ON schedule_firings (schedule_id, recorded_at DESC);
CREATE INDEX schedule_firings_buffered_idx ON schedule_firings (schedule_id, scheduled_time) WHERE status = 'buffered';
CREATE INDEX runs_schedule_idx ON runs (schedule_id, created_at DESC) WHERE schedule_id IS NOT NULL;

ALTER TABLE runs DROP CONSTRAINT runs_trigger_check;
ALTER TABLE runs ADD CONSTRAINT runs_trigger_check
    CHECK (trigger IN ('ui', 'api', 'schedule', 'schedule_manual', 'process', 'integration', 'mcp', 'agent'));
