-- Quarantine (docs/stats.md): a scenario identity of a project whose failures do not fail its run.
-- The scenario still runs and its result is recorded. A quarantine ends when a user releases it,
-- when it expires, or after release_after consecutive clean (passed) results; the last is done here,
-- in the transaction that writes the result, and audited as the system.
CREATE TABLE scenario_quarantines (
    id             uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id     uuid        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    identity       text        NOT NULL,
    feature_path   text        NOT NULL,
    name           text        NOT NULL,
    example_row    integer,
    owner          text        NOT NULL,
    reason         text        NOT NULL,
    expires_at     timestamptz,
    release_after  integer     CHECK (release_after IS NULL OR release_after > 0),
    clean_streak   integer     NOT NULL DEFAULT 0,
    created_by     uuid        REFERENCES users (id) ON DELETE SET NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    released_at    timestamptz,
    release_reason text
);
CREATE UNIQUE INDEX scenario_quarantines_open_idx ON scenario_quarantines (project_id, identity) WHERE released_at IS NULL;

-- A final result of a quarantined identity moves its clean streak; enough clean results release it.
CREATE FUNCTION stats_quarantine_result() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    q scenario_quarantines;
BEGIN
    IF NEW.status NOT IN ('passed', 'failed', 'undefined', 'ambiguous') THEN
        RETURN NULL;
    END IF;
    UPDATE scenario_quarantines SET clean_streak = CASE WHEN NEW.status = 'passed' THEN clean_streak + 1 ELSE 0 END
    WHERE project_id = (SELECT project_id FROM runs WHERE id = NEW.run_id) AND identity = NEW.identity AND released_at IS NULL
    RETURNING * INTO q;
    IF q.id IS NOT NULL AND q.release_after IS NOT NULL AND q.clean_streak >= q.release_after THEN
        UPDATE scenario_quarantines SET released_at = now(),
               release_reason = format('released after %s consecutive clean results', q.clean_streak)
        WHERE id = q.id;
        INSERT INTO audit_entries (actor_kind, actor_name, operation, outcome, target_kind, target_id, target_name, detail)
        VALUES ('system', 'sdods', 'releaseQuarantine', 'success', 'quarantine', q.id::text, q.feature_path || ' › ' || q.name,
                jsonb_build_object('cleanResults', q.clean_streak, 'runId', NEW.run_id));
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER run_scenarios_quarantine AFTER INSERT OR UPDATE OF status ON run_scenarios
    FOR EACH ROW EXECUTE FUNCTION stats_quarantine_result();

-- A finished run counts its failures of identities quarantined when it finishes (counts.quarantined);
-- when they are its only failures and the run itself reported no error, the run passes.
CREATE FUNCTION stats_quarantine_run() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    quarantined bigint;
    others      bigint;
BEGIN
    SELECT count(*) FILTER (WHERE held), count(*) FILTER (WHERE NOT held) INTO quarantined, others
    FROM (SELECT EXISTS (SELECT 1 FROM scenario_quarantines q
                         WHERE q.project_id = NEW.project_id AND q.identity = rs.identity
                           AND q.released_at IS NULL AND (q.expires_at IS NULL OR q.expires_at > now())) AS held
          FROM run_scenarios rs
          WHERE rs.run_id = NEW.id AND rs.status IN ('failed', 'undefined', 'ambiguous')) f;
    IF quarantined > 0 THEN
        NEW.counts = coalesce(NEW.counts, '{}'::jsonb) || jsonb_build_object('quarantined', quarantined);
        IF NEW.status = 'failed' AND others = 0 AND NEW.error IS NULL THEN
            NEW.status = 'passed';
        END IF;
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER runs_quarantine BEFORE UPDATE ON runs
    FOR EACH ROW WHEN (NEW.status IN ('passed', 'failed') AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.counts IS DISTINCT FROM NEW.counts))
    EXECUTE FUNCTION stats_quarantine_run();
