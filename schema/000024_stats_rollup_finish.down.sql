-- The function of 000020, without 000024's setting.
ALTER FUNCTION stats_rollup_run() RESET ALL;
-- A run that finishes adds its results to its day (see 000012). What changes: an identity with one
-- result in the run (the usual case) is summarised from its row alone, with no ordered aggregation;
-- those with several go through stats_rollup_compute as before; the identities whose day already
-- holds a later outcome are found with an index probe per result; histograms add up with stats_hist_add.
CREATE OR REPLACE FUNCTION stats_rollup_run() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    at    timestamptz := coalesce(NEW.started_at, NEW.created_at);
    d     date := (at AT TIME ZONE 'UTC')::date;
    late  text[]; -- identities whose day is recomputed
    multi text[]; -- identities with several results in the run, not late (rare)
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.status NOT IN ('queued', 'running') THEN
        PERFORM stats_rollup_recompute_day(OLD.project_id, (coalesce(OLD.started_at, OLD.created_at) AT TIME ZONE 'UTC')::date);
        IF (coalesce(OLD.started_at, OLD.created_at) AT TIME ZONE 'UTC')::date <> d OR OLD.project_id <> NEW.project_id THEN
            PERFORM stats_rollup_recompute_day(NEW.project_id, d);
        END IF;
        RETURN NULL;
    END IF;
    -- Runs and steps add up in any order.
    INSERT INTO stats_run_days AS x SELECT * FROM stats_run_day_compute(NEW.project_id, at, at + interval '1 microsecond', NEW.id)
    ON CONFLICT (project_id, day) DO UPDATE SET runs = x.runs + EXCLUDED.runs, passed = x.passed + EXCLUDED.passed,
        failed = x.failed + EXCLUDED.failed, errored = x.errored + EXCLUDED.errored, cancelled = x.cancelled + EXCLUDED.cancelled,
        timed_out = x.timed_out + EXCLUDED.timed_out, dur_hist = stats_hist_add(x.dur_hist, EXCLUDED.dur_hist),
        s_total = x.s_total + EXCLUDED.s_total, s_passed = x.s_passed + EXCLUDED.s_passed, s_failed = x.s_failed + EXCLUDED.s_failed,
        s_skipped = x.s_skipped + EXCLUDED.s_skipped, s_pending = x.s_pending + EXCLUDED.s_pending,
        s_undefined = x.s_undefined + EXCLUDED.s_undefined, s_flaky = x.s_flaky + EXCLUDED.s_flaky, s_hist = stats_hist_add(x.s_hist, EXCLUDED.s_hist);
    INSERT INTO stats_step_days AS x SELECT * FROM stats_step_day_compute(NEW.project_id, at, at + interval '1 microsecond', NEW.id)
    ON CONFLICT (project_id, day, keyword, text) DO UPDATE SET count = x.count + EXCLUDED.count, dur_hist = stats_hist_add(x.dur_hist, EXCLUDED.dur_hist);
    INSERT INTO stats_heal_days AS x SELECT * FROM stats_heal_compute(NEW.project_id, at, at + interval '1 microsecond', NEW.id)
    ON CONFLICT (project_id, day, identity, old_selector, new_selector, strategy) DO UPDATE SET count = x.count + EXCLUDED.count,
        score_sum = x.score_sum + EXCLUDED.score_sum, last_at = greatest(x.last_at, EXCLUDED.last_at);
    -- An identity is late when its day's row holds an outcome after the run's: a subquery on the
    -- row's key, run once per result (an index probe), and below only when some identity is late.
    -- No array is searched per row, and no join order depends on how many rows the planner expects
    -- (a new run's results are often estimated at one row, which made joins of the day's rows with
    -- them nested loops over both).
    SELECT coalesce(array_agg(identity) FILTER (WHERE later), '{}'), coalesce(array_agg(identity) FILTER (WHERE NOT later AND results > 1), '{}')
    INTO late, multi
    FROM (SELECT rs.identity, count(*) AS results,
                 coalesce(bool_or((SELECT (cur.last_at, cur.last_run) > (at, NEW.id) FROM stats_scenario_days cur
                                   WHERE cur.project_id = NEW.project_id AND cur.day = d AND cur.identity = rs.identity)), false) AS later
          FROM run_scenarios rs WHERE rs.run_id = NEW.id GROUP BY rs.identity) x;
    IF cardinality(late) > 0 THEN
        PERFORM stats_rollup_recompute(NEW.project_id, d, late);
    END IF;
    -- Failures add up in any order (those of late identities were recomputed with their day).
    INSERT INTO stats_failure_days AS f
    SELECT c.* FROM stats_failure_compute(NEW.project_id, at, at + interval '1 microsecond', NEW.id, NULL) c
    WHERE cardinality(late) = 0
       OR NOT coalesce((SELECT (cur.last_at, cur.last_run) > (at, NEW.id) FROM stats_scenario_days cur
                        WHERE cur.project_id = NEW.project_id AND cur.day = d AND cur.identity = c.identity), false)
    ON CONFLICT (project_id, day, identity, signature, step_keyword, step_text) DO UPDATE SET
        count = f.count + EXCLUDED.count, first_at = least(f.first_at, EXCLUDED.first_at), last_at = greatest(f.last_at, EXCLUDED.last_at);
    INSERT INTO stats_scenario_days AS s
    SELECT NEW.project_id, d, rs.identity, rs.feature_path, rs.name, rs.example_row, 1,
           (rs.status = 'passed')::int, (rs.status IN ('failed', 'ambiguous'))::int, (rs.status = 'undefined')::int,
           (rs.status = 'skipped')::int, (rs.status = 'pending')::int, (rs.status = 'passed' AND rs.attempts > 1)::int,
           o.outcome::int, 0, (rs.status = 'passed' AND rs.attempts > 1)::int,
           CASE WHEN NOT o.outcome THEN 0
                WHEN rs.status <> 'passed' THEN coalesce(rs.duration_ms, 0)::float8
                WHEN rs.attempts > 1 THEN coalesce(rs.duration_ms, 0) * (rs.attempts - 1)::float8 / rs.attempts
                ELSE 0 END,
           CASE WHEN o.outcome THEN rs.heals ELSE 0 END,
           CASE WHEN o.outcome THEN rs.status = 'passed' END, CASE WHEN o.outcome THEN rs.status = 'passed' AND rs.attempts > 1 END,
           CASE WHEN o.outcome THEN at END, CASE WHEN o.outcome THEN NEW.id END, CASE WHEN o.outcome THEN rs.position END,
           CASE WHEN o.outcome THEN rs.status = 'passed' END,
           CASE WHEN o.outcome THEN at END, CASE WHEN o.outcome THEN NEW.id END, CASE WHEN o.outcome THEN rs.position END,
           CASE WHEN rs.status = 'passed' AND rs.attempts > 1 THEN at END, CASE WHEN rs.status = 'passed' AND rs.attempts > 1 THEN at END,
           CASE WHEN rs.duration_ms IS NULL THEN '{}' ELSE ARRAY[ROW(stats_band(rs.duration_ms), 1, rs.duration_ms::float8)::stats_bin] END,
           CASE WHEN rs.duration_ms IS NULL OR rs.status NOT IN ('passed', 'failed') THEN '{}'
                ELSE ARRAY[ROW(stats_band(rs.duration_ms), 1, rs.duration_ms::float8)::stats_bin] END
    FROM (SELECT rs.*, count(*) OVER (PARTITION BY rs.identity) AS results FROM run_scenarios rs WHERE rs.run_id = NEW.id) rs
    CROSS JOIN LATERAL (SELECT rs.status IN ('passed', 'failed', 'undefined', 'ambiguous') AS outcome) o
    WHERE rs.results = 1
      AND (cardinality(late) = 0
           OR NOT coalesce((SELECT (cur.last_at, cur.last_run) > (at, NEW.id) FROM stats_scenario_days cur
                            WHERE cur.project_id = NEW.project_id AND cur.day = d AND cur.identity = rs.identity), false))
    UNION ALL
    SELECT c.* FROM stats_rollup_compute(NEW.project_id, at, at + interval '1 microsecond', NEW.id, multi) c WHERE cardinality(multi) > 0
    ON CONFLICT (project_id, day, identity) DO UPDATE SET
        feature_path = EXCLUDED.feature_path, name = EXCLUDED.name, example_row = EXCLUDED.example_row,
        total = s.total + EXCLUDED.total, passed = s.passed + EXCLUDED.passed, failed = s.failed + EXCLUDED.failed,
        undefined = s.undefined + EXCLUDED.undefined, skipped = s.skipped + EXCLUDED.skipped, pending = s.pending + EXCLUDED.pending,
        retry_passes = s.retry_passes + EXCLUDED.retry_passes, n = s.n + EXCLUDED.n,
        flips = s.flips + EXCLUDED.flips + (s.last_ok IS NOT NULL AND EXCLUDED.first_ok IS NOT NULL AND s.last_ok <> EXCLUDED.first_ok)::int,
        flaky_results = s.flaky_results + EXCLUDED.flaky_results
            + (s.last_ok IS NOT NULL AND EXCLUDED.first_ok IS NOT NULL AND s.last_ok <> EXCLUDED.first_ok AND NOT EXCLUDED.first_retry)::int,
        lost_ms = s.lost_ms + EXCLUDED.lost_ms, heals = s.heals + EXCLUDED.heals,
        first_ok = coalesce(s.first_ok, EXCLUDED.first_ok), first_retry = CASE WHEN s.first_ok IS NULL THEN EXCLUDED.first_retry ELSE s.first_retry END,
        first_at = coalesce(s.first_at, EXCLUDED.first_at), first_run = coalesce(s.first_run, EXCLUDED.first_run),
        first_pos = coalesce(s.first_pos, EXCLUDED.first_pos),
        last_ok = coalesce(EXCLUDED.last_ok, s.last_ok), last_at = coalesce(EXCLUDED.last_at, s.last_at),
        last_run = coalesce(EXCLUDED.last_run, s.last_run), last_pos = coalesce(EXCLUDED.last_pos, s.last_pos),
        first_flaky = least(s.first_flaky, EXCLUDED.first_flaky,
            CASE WHEN s.last_ok IS NOT NULL AND EXCLUDED.first_ok IS NOT NULL AND s.last_ok <> EXCLUDED.first_ok THEN EXCLUDED.first_at END),
        last_flaky = greatest(s.last_flaky, EXCLUDED.last_flaky,
            CASE WHEN s.last_ok IS NOT NULL AND EXCLUDED.first_ok IS NOT NULL AND s.last_ok <> EXCLUDED.first_ok THEN EXCLUDED.first_at END),
        dur_hist = stats_hist_add(s.dur_hist, EXCLUDED.dur_hist), pf_hist = stats_hist_add(s.pf_hist, EXCLUDED.pf_hist);
    RETURN NULL;
END
$$;
