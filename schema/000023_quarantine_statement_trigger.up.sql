-- The quarantine's clean streaks (000010) were moved by a row trigger: a plpgsql call, a lookup of
-- the run's project and an UPDATE of scenario_quarantines for every final result written — 60 µs a
-- result, 12 ms of a 200-result batch of the runner, in a project without any quarantine too
-- (docs/benchmarks.md, "Runner: round 3"). Statement triggers over the statement's transition
-- tables now find the results of quarantined identities in one join, and move their streaks one
-- result after the other, in the order the results happened (finished_at, then the row's position
-- in its run), exactly as the row trigger did for one result: two results of one identity in one
-- statement count as two, and the later one decides (passed then failed: the streak is 0).
--
-- What counts as a written result: an inserted row with a final status; an updated row whose
-- status is final and whose result (status, error, finished_at, attempts, duration) changed. (The
-- row trigger counted every UPDATE that named status; the statements that do not — a run's
-- progress, an interrupted run's scenarios — never change a final row's result.)

-- stats_quarantine_count moves an open quarantine's streak by one result, and releases it after
-- enough clean results, audited as the system.
CREATE FUNCTION stats_quarantine_count(quarantine_id uuid, result_status text, result_run_id uuid) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    q scenario_quarantines;
BEGIN
    UPDATE scenario_quarantines SET clean_streak = CASE WHEN result_status = 'passed' THEN clean_streak + 1 ELSE 0 END
    WHERE id = quarantine_id AND released_at IS NULL
    RETURNING * INTO q;
    IF q.id IS NOT NULL AND q.release_after IS NOT NULL AND q.clean_streak >= q.release_after THEN
        UPDATE scenario_quarantines SET released_at = now(),
               release_reason = format('released after %s consecutive clean results', q.clean_streak)
        WHERE id = q.id;
        INSERT INTO audit_entries (actor_kind, actor_name, operation, outcome, target_kind, target_id, target_name, detail)
        VALUES ('system', 'sdods', 'releaseQuarantine', 'success', 'quarantine', q.id::text, q.feature_path || ' › ' || q.name,
                jsonb_build_object('cleanResults', q.clean_streak, 'runId', result_run_id));
    END IF;
END
$$;

CREATE FUNCTION stats_quarantine_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    FOR r IN
        SELECT q.id AS quarantine_id, n.status, n.run_id
        FROM new_rows n
        JOIN runs ru ON ru.id = n.run_id
        JOIN scenario_quarantines q ON q.project_id = ru.project_id AND q.identity = n.identity AND q.released_at IS NULL
        WHERE n.status IN ('passed', 'failed', 'undefined', 'ambiguous')
        ORDER BY n.finished_at NULLS LAST, n.run_id, n.position, n.id
    LOOP
        PERFORM stats_quarantine_count(r.quarantine_id, r.status, r.run_id);
    END LOOP;
    RETURN NULL;
END
$$;

CREATE FUNCTION stats_quarantine_updated() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    FOR r IN
        SELECT q.id AS quarantine_id, n.status, n.run_id
        FROM new_rows n
        JOIN old_rows o ON o.id = n.id
        JOIN runs ru ON ru.id = n.run_id
        JOIN scenario_quarantines q ON q.project_id = ru.project_id AND q.identity = n.identity AND q.released_at IS NULL
        WHERE n.status IN ('passed', 'failed', 'undefined', 'ambiguous')
          AND (o.status, o.error, o.finished_at, o.attempts, o.duration_ms) IS DISTINCT FROM
              (n.status, n.error, n.finished_at, n.attempts, n.duration_ms)
        ORDER BY n.finished_at NULLS LAST, n.run_id, n.position, n.id
    LOOP
        PERFORM stats_quarantine_count(r.quarantine_id, r.status, r.run_id);
    END LOOP;
    RETURN NULL;
END
$$;

DROP TRIGGER run_scenarios_quarantine ON run_scenarios;
DROP FUNCTION stats_quarantine_result();
CREATE TRIGGER run_scenarios_quarantine_inserted AFTER INSERT ON run_scenarios
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION stats_quarantine_inserted();
CREATE TRIGGER run_scenarios_quarantine_updated AFTER UPDATE ON run_scenarios
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION stats_quarantine_updated();
