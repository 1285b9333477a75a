DROP TRIGGER run_scenarios_quarantine_updated ON run_scenarios;
DROP TRIGGER run_scenarios_quarantine_inserted ON run_scenarios;
DROP FUNCTION stats_quarantine_updated();
DROP FUNCTION stats_quarantine_inserted();
DROP FUNCTION stats_quarantine_count(uuid, text, uuid);

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
    FOR EACH ROW WHEN (NEW.status IN ('passed', 'failed', 'undefined', 'ambiguous'))
    EXECUTE FUNCTION stats_quarantine_result();
