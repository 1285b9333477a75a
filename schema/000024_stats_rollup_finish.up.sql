-- The statistics rollup of a run's first finish (docs/stats.md, "Daily rollup"), cheaper again
-- (issue 31, item 2; docs/benchmarks.md, "the run's finish"). The same rows as 000020's; what changes:
-- - whether any identity is late is first asked of the runs, with one probe of runs_stats_idx: no
--   finished run of the project has a later run time on the day, so no row of the day holds a later
--   outcome, and the probe of each identity's row (a grouping of the run's results and an index
--   probe per result) is skipped; the identities with several results are then found by hashing;
-- - without such identities, the run's results are merged without a window over them (a sort);
-- - failures, step days and the run's day are summarised from the run's own results (not through
--   the compute functions' join of runs and results over a time range, which serve a whole day),
--   with the failing step found once per failure instead of three times, and in a subquery rather
--   than a call of a SQL function (which stops stats_locator from being inlined);
-- - plan_cache_mode is auto while the trigger runs: every row it inserts (the rows of a day's first
--   run, of identities new to the day) fires the foreign key's check of the project, a prepared
--   statement that the server's force_custom_plan (impl/server/store) planned again for each row —
--   150 ms of a 10,000-result first finish. The trigger's own statements are planned as before for
--   a connection's first five finishes and may then keep a generic plan: each reads the run's
--   results by run_id and probes the rollup by its key, a plan that does not depend on the values.
CREATE OR REPLACE FUNCTION stats_rollup_run() RETURNS trigger LANGUAGE plpgsql SET plan_cache_mode = auto AS $$
DECLARE
    at    timestamptz := coalesce(NEW.started_at, NEW.created_at);
    d     date := (at AT TIME ZONE 'UTC')::date;
    late  text[] := '{}'; -- identities whose day is recomputed
    multi text[];         -- identities with several results in the run, not late (rare)
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.status NOT IN ('queued', 'running') THEN
        PERFORM stats_rollup_recompute_day(OLD.project_id, (coalesce(OLD.started_at, OLD.created_at) AT TIME ZONE 'UTC')::date);
        IF (coalesce(OLD.started_at, OLD.created_at) AT TIME ZONE 'UTC')::date <> d OR OLD.project_id <> NEW.project_id THEN
            PERFORM stats_rollup_recompute_day(NEW.project_id, d);
        END IF;
        RETURN NULL;
    END IF;
    -- Runs and steps add up in any order. The run's day: stats_run_day_compute of this run alone.
    INSERT INTO stats_run_days AS x
    SELECT NEW.project_id, d, 1, (NEW.status = 'passed')::int, (NEW.status = 'failed')::int, (NEW.status = 'errored')::int,
           (NEW.status = 'cancelled')::int, (NEW.status = 'timed_out')::int,
           CASE WHEN r.dur IS NULL THEN '{}' ELSE ARRAY[ROW(stats_band(r.dur::float8), 1, r.dur::float8)::stats_bin] END,
           sn.total, sn.passed, sn.failed, sn.skipped, sn.pending, sn.undefined, sn.flaky, coalesce(sh.hist, '{}')
    FROM (SELECT extract(epoch FROM NEW.finished_at - NEW.started_at) * 1000 AS dur) r,
         (SELECT count(*)::int AS total, count(*) FILTER (WHERE status = 'passed')::int AS passed,
                 count(*) FILTER (WHERE status IN ('failed', 'ambiguous'))::int AS failed, count(*) FILTER (WHERE status = 'skipped')::int AS skipped,
                 count(*) FILTER (WHERE status = 'pending')::int AS pending, count(*) FILTER (WHERE status = 'undefined')::int AS undefined,
                 count(*) FILTER (WHERE status = 'passed' AND attempts > 1)::int AS flaky
          FROM run_scenarios WHERE run_id = NEW.id) sn,
         (SELECT array_agg(ROW(band, c, s)::stats_bin ORDER BY band) AS hist
          FROM (SELECT stats_band(duration_ms) AS band, count(*) AS c, sum(duration_ms)::float8 AS s
                FROM run_scenarios WHERE run_id = NEW.id AND duration_ms IS NOT NULL GROUP BY 1) b) sh
    ON CONFLICT (project_id, day) DO UPDATE SET runs = x.runs + EXCLUDED.runs, passed = x.passed + EXCLUDED.passed,
        failed = x.failed + EXCLUDED.failed, errored = x.errored + EXCLUDED.errored, cancelled = x.cancelled + EXCLUDED.cancelled,
        timed_out = x.timed_out + EXCLUDED.timed_out, dur_hist = stats_hist_add(x.dur_hist, EXCLUDED.dur_hist),
        s_total = x.s_total + EXCLUDED.s_total, s_passed = x.s_passed + EXCLUDED.s_passed, s_failed = x.s_failed + EXCLUDED.s_failed,
        s_skipped = x.s_skipped + EXCLUDED.s_skipped, s_pending = x.s_pending + EXCLUDED.s_pending,
        s_undefined = x.s_undefined + EXCLUDED.s_undefined, s_flaky = x.s_flaky + EXCLUDED.s_flaky, s_hist = stats_hist_add(x.s_hist, EXCLUDED.s_hist);
    -- The steps: stats_step_day_compute of this run alone, in one grouping by keyword and text. A
    -- step whose durations in the run share one band (in a run, a step text usually occurs once) is
    -- one bin; only the others build their histogram from the durations, which the grouping keeps
    -- (two groupings, by band and then by step, with an ordered array_agg, took twice as long).
    INSERT INTO stats_step_days AS x
    SELECT NEW.project_id, d, keyword, text, n::int,
           CASE WHEN lo = hi THEN ARRAY[ROW(lo, n, total)::stats_bin]
                ELSE (SELECT array_agg(ROW(band, c, s)::stats_bin ORDER BY band)
                      FROM (SELECT stats_band(v) AS band, count(*) AS c, sum(v) AS s FROM unnest(durations) v GROUP BY 1) hb) END
    FROM (SELECT keyword, text, count(*) AS n, min(band) AS lo, max(band) AS hi, sum(dur) AS total, array_agg(dur) AS durations
          FROM (SELECT coalesce(st->>'keyword', '') AS keyword, coalesce(st->>'text', '') AS text, (st->>'durationMs')::float8 AS dur,
                       stats_band((st->>'durationMs')::float8) AS band
                FROM run_scenarios rs, jsonb_array_elements(CASE WHEN jsonb_typeof(rs.steps) = 'array' THEN rs.steps ELSE '[]'::jsonb END) st
                WHERE rs.run_id = NEW.id AND jsonb_typeof(st->'durationMs') = 'number') st
          GROUP BY keyword, text) g
    ON CONFLICT (project_id, day, keyword, text) DO UPDATE SET count = x.count + EXCLUDED.count, dur_hist = stats_hist_add(x.dur_hist, EXCLUDED.dur_hist);
    INSERT INTO stats_heal_days AS x SELECT * FROM stats_heal_compute(NEW.project_id, at, at + interval '1 microsecond', NEW.id)
    ON CONFLICT (project_id, day, identity, old_selector, new_selector, strategy) DO UPDATE SET count = x.count + EXCLUDED.count,
        score_sum = x.score_sum + EXCLUDED.score_sum, last_at = greatest(x.last_at, EXCLUDED.last_at);
    -- An identity is late when its day's row holds an outcome after the run's. Those outcomes come
    -- from finished runs of the project whose run time is on the day (a finished run never goes back
    -- to queued or running; one that moves has its old day recomputed): without a later one, no
    -- identity is late, which one probe of runs_stats_idx tells.
    IF EXISTS (SELECT 1 FROM runs r
               WHERE r.project_id = NEW.project_id AND r.id <> NEW.id AND r.status NOT IN ('queued', 'running')
                 AND coalesce(r.started_at, r.created_at) >= at
                 AND coalesce(r.started_at, r.created_at) < (d + 1)::timestamp AT TIME ZONE 'UTC'
                 AND (coalesce(r.started_at, r.created_at), r.id) > (at, NEW.id)) THEN
        -- A subquery on the row's key, run once per result (an index probe); no array is searched
        -- per row, and no join order depends on how many rows the planner expects.
        SELECT coalesce(array_agg(identity) FILTER (WHERE later), '{}'), coalesce(array_agg(identity) FILTER (WHERE NOT later AND results > 1), '{}')
        INTO late, multi
        FROM (SELECT rs.identity, count(*) AS results,
                     coalesce(bool_or((SELECT (cur.last_at, cur.last_run) > (at, NEW.id) FROM stats_scenario_days cur
                                       WHERE cur.project_id = NEW.project_id AND cur.day = d AND cur.identity = rs.identity)), false) AS later
              FROM run_scenarios rs WHERE rs.run_id = NEW.id GROUP BY rs.identity) x;
    ELSE
        SELECT coalesce(array_agg(identity), '{}') INTO multi
        FROM (SELECT identity FROM run_scenarios WHERE run_id = NEW.id GROUP BY identity HAVING count(*) > 1) m;
    END IF;
    IF cardinality(late) > 0 THEN
        PERFORM stats_rollup_recompute(NEW.project_id, d, late);
    END IF;
    -- Failures add up in any order (those of late identities were recomputed with their day):
    -- stats_failure_compute of this run alone.
    INSERT INTO stats_failure_days AS f
    SELECT NEW.project_id, d, rs.identity, rs.failure_signature, coalesce(fs.step->>'keyword', ''), coalesce(fs.step->>'text', ''),
           stats_locator(fs.step->>'text'), count(*)::int, at, at
    FROM run_scenarios rs
    LEFT JOIN LATERAL (SELECT s AS step FROM jsonb_array_elements(CASE WHEN jsonb_typeof(rs.steps) = 'array' THEN rs.steps ELSE '[]'::jsonb END) s
                       WHERE s->>'status' IN ('failed', 'undefined', 'ambiguous') LIMIT 1) fs ON true
    WHERE rs.run_id = NEW.id AND rs.failure_signature IS NOT NULL
      AND (cardinality(late) = 0
           OR NOT coalesce((SELECT (cur.last_at, cur.last_run) > (at, NEW.id) FROM stats_scenario_days cur
                            WHERE cur.project_id = NEW.project_id AND cur.day = d AND cur.identity = rs.identity), false))
    GROUP BY 3, 4, 5, 6, 7
    ON CONFLICT (project_id, day, identity, signature, step_keyword, step_text) DO UPDATE SET
        count = f.count + EXCLUDED.count, first_at = least(f.first_at, EXCLUDED.first_at), last_at = greatest(f.last_at, EXCLUDED.last_at);
    -- An identity with one result in the run is summarised from its row alone; those with several
    -- (multi) go through stats_rollup_compute.
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
    FROM run_scenarios rs
    CROSS JOIN LATERAL (SELECT rs.status IN ('passed', 'failed', 'undefined', 'ambiguous') AS outcome) o
    WHERE rs.run_id = NEW.id
      AND (cardinality(multi) = 0 OR rs.identity NOT IN (SELECT unnest(multi)))
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
