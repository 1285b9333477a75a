DROP TRIGGER runs_stats_rollup_update ON runs;
CREATE TRIGGER runs_stats_rollup_update AFTER UPDATE ON runs
    FOR EACH ROW WHEN (NEW.status NOT IN ('queued', 'running') AND (OLD.status IN ('queued', 'running')
        OR OLD.status IS DISTINCT FROM NEW.status OR OLD.counts IS DISTINCT FROM NEW.counts
        OR OLD.started_at IS DISTINCT FROM NEW.started_at OR OLD.project_id IS DISTINCT FROM NEW.project_id))
    EXECUTE FUNCTION stats_rollup_run();
ALTER TABLE stats_scenario_days RESET (fillfactor);
ALTER TABLE stats_step_days RESET (fillfactor);
-- The function of 000012.
-- A run that finishes adds its results to its day. When they come after every outcome the day
-- already holds for their identities (the usual case), they are merged into the rows; otherwise (a
-- run started before another that finished first, history ingested late) those identities' day is
-- recomputed from its results. A finished run that changes again (another document ingested into
-- it) has its old and new day recomputed.
CREATE OR REPLACE FUNCTION stats_rollup_run() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    at   timestamptz := coalesce(NEW.started_at, NEW.created_at);
    d    date := (at AT TIME ZONE 'UTC')::date;
    ids  text[];
    late text[];
    fast text[]; -- the identities merged (null: all of the run's)
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
        timed_out = x.timed_out + EXCLUDED.timed_out, dur_hist = stats_hist_merge(x.dur_hist, EXCLUDED.dur_hist),
        s_total = x.s_total + EXCLUDED.s_total, s_passed = x.s_passed + EXCLUDED.s_passed, s_failed = x.s_failed + EXCLUDED.s_failed,
        s_skipped = x.s_skipped + EXCLUDED.s_skipped, s_pending = x.s_pending + EXCLUDED.s_pending,
        s_undefined = x.s_undefined + EXCLUDED.s_undefined, s_flaky = x.s_flaky + EXCLUDED.s_flaky, s_hist = stats_hist_merge(x.s_hist, EXCLUDED.s_hist);
    INSERT INTO stats_step_days AS x SELECT * FROM stats_step_day_compute(NEW.project_id, at, at + interval '1 microsecond', NEW.id)
    ON CONFLICT (project_id, day, keyword, text) DO UPDATE SET count = x.count + EXCLUDED.count, dur_hist = stats_hist_merge(x.dur_hist, EXCLUDED.dur_hist);
    INSERT INTO stats_heal_days AS x SELECT * FROM stats_heal_compute(NEW.project_id, at, at + interval '1 microsecond', NEW.id)
    ON CONFLICT (project_id, day, identity, old_selector, new_selector, strategy) DO UPDATE SET count = x.count + EXCLUDED.count,
        score_sum = x.score_sum + EXCLUDED.score_sum, last_at = greatest(x.last_at, EXCLUDED.last_at);
    SELECT array_agg(DISTINCT identity) INTO ids FROM run_scenarios WHERE run_id = NEW.id;
    IF ids IS NULL THEN
        RETURN NULL;
    END IF;
    SELECT array_agg(identity) INTO late FROM stats_scenario_days s
    WHERE s.project_id = NEW.project_id AND s.day = d AND s.identity = ANY(ids) AND s.last_at IS NOT NULL
      AND (s.last_at, s.last_run) > (at, NEW.id);
    IF late IS NOT NULL THEN
        PERFORM stats_rollup_recompute(NEW.project_id, d, late);
        fast := ARRAY(SELECT unnest(ids) EXCEPT SELECT unnest(late));
    END IF;
    INSERT INTO stats_scenario_days AS s
    SELECT * FROM stats_rollup_compute(NEW.project_id, at, at + interval '1 microsecond', NEW.id, fast) c
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
        dur_hist = stats_hist_merge(s.dur_hist, EXCLUDED.dur_hist), pf_hist = stats_hist_merge(s.pf_hist, EXCLUDED.pf_hist);
    -- Failures add up in any order.
    INSERT INTO stats_failure_days AS f
    SELECT * FROM stats_failure_compute(NEW.project_id, at, at + interval '1 microsecond', NEW.id, fast) c
    ON CONFLICT (project_id, day, identity, signature, step_keyword, step_text) DO UPDATE SET
        count = f.count + EXCLUDED.count, first_at = least(f.first_at, EXCLUDED.first_at), last_at = greatest(f.last_at, EXCLUDED.last_at);
    RETURN NULL;
END
$$;
DROP FUNCTION IF EXISTS stats_hist_add(stats_bin[], stats_bin[]);
