-- Back to the rollup written in the finish's transaction (000024): the pending runs applied first.
SELECT stats_rollup_drain(project_id, NULL) FROM (SELECT DISTINCT project_id FROM stats_rollup_pending ORDER BY 1) p;

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

CREATE OR REPLACE FUNCTION stats_failure_compute(p_project uuid, p_from timestamptz, p_to timestamptz, p_run uuid, p_identities text[])
RETURNS SETOF stats_failure_days LANGUAGE sql STABLE AS $$
    SELECT r.project_id, (coalesce(r.started_at, r.created_at) AT TIME ZONE 'UTC')::date, rs.identity, rs.failure_signature,
           coalesce(stats_failing_step(rs.steps)->>'keyword', ''), coalesce(stats_failing_step(rs.steps)->>'text', ''),
           stats_locator(stats_failing_step(rs.steps)->>'text'),
           count(*)::int, min(coalesce(r.started_at, r.created_at)), max(coalesce(r.started_at, r.created_at))
    FROM runs r JOIN run_scenarios rs ON rs.run_id = r.id
    WHERE r.project_id = p_project AND r.status NOT IN ('queued', 'running')
      AND coalesce(r.started_at, r.created_at) >= p_from AND coalesce(r.started_at, r.created_at) < p_to
      AND (p_run IS NULL OR r.id = p_run)
      AND (p_identities IS NULL OR rs.identity IN (SELECT unnest(p_identities)))
      AND rs.failure_signature IS NOT NULL
    GROUP BY 1, 2, 3, 4, 5, 6, 7
$$;

CREATE OR REPLACE FUNCTION stats_heal_compute(p_project uuid, p_from timestamptz, p_to timestamptz, p_run uuid)
RETURNS SETOF stats_heal_days LANGUAGE sql STABLE AS $$
    SELECT r.project_id, (coalesce(r.started_at, r.created_at) AT TIME ZONE 'UTC')::date, sh.identity, sh.old_selector, sh.new_selector,
           sh.strategy, count(*)::int, sum(sh.score), max(coalesce(r.started_at, r.created_at))
    FROM runs r JOIN stats_heals sh ON sh.run_id = r.id
    WHERE r.project_id = p_project AND r.status NOT IN ('queued', 'running')
      AND coalesce(r.started_at, r.created_at) >= p_from AND coalesce(r.started_at, r.created_at) < p_to
      AND (p_run IS NULL OR r.id = p_run)
    GROUP BY 1, 2, 3, 4, 5, 6
$$;

CREATE OR REPLACE FUNCTION stats_rollup_compute(p_project uuid, p_from timestamptz, p_to timestamptz, p_run uuid, p_identities text[])
RETURNS SETOF stats_scenario_days LANGUAGE sql STABLE AS $$
    WITH res AS (
        SELECT r.project_id, (coalesce(r.started_at, r.created_at) AT TIME ZONE 'UTC')::date AS day, rs.identity,
               rs.feature_path, rs.name, rs.example_row, rs.status, rs.attempts, coalesce(rs.duration_ms, 0) AS duration_ms, rs.heals,
               coalesce(r.started_at, r.created_at) AS at, r.id AS run_id, rs.position, rs.duration_ms AS dur,
               rs.status IN ('passed', 'failed', 'undefined', 'ambiguous') AS outcome, rs.status = 'passed' AS ok
        FROM runs r JOIN run_scenarios rs ON rs.run_id = r.id
        WHERE r.project_id = p_project AND r.status NOT IN ('queued', 'running')
          AND coalesce(r.started_at, r.created_at) >= p_from AND coalesce(r.started_at, r.created_at) < p_to
          AND (p_run IS NULL OR r.id = p_run)
          AND (p_identities IS NULL OR rs.identity IN (SELECT unnest(p_identities)))
    ), hb AS (
        SELECT day, identity, stats_band(dur) AS band, count(*) AS c, sum(dur)::float8 AS s,
               count(*) FILTER (WHERE status IN ('passed', 'failed')) AS pc, coalesce(sum(dur) FILTER (WHERE status IN ('passed', 'failed')), 0)::float8 AS ps
        FROM res WHERE dur IS NOT NULL GROUP BY 1, 2, 3
    ), h AS (
        SELECT day, identity, array_agg(ROW(band, c, s)::stats_bin ORDER BY band) AS dur_hist,
               coalesce(array_agg(ROW(band, pc, ps)::stats_bin ORDER BY band) FILTER (WHERE pc > 0), '{}') AS pf_hist
        FROM hb GROUP BY 1, 2
    ), seq AS (
        SELECT res.*, lag(ok) OVER (PARTITION BY day, identity ORDER BY at, run_id, position) AS prev
        FROM res WHERE outcome
    ), flagged AS (
        SELECT seq.*, (prev IS NOT NULL AND prev <> ok) AS flip, (ok AND attempts > 1) AS retry_pass FROM seq
    ), o AS (
        SELECT day, identity,
               count(*)::int AS n,
               count(*) FILTER (WHERE flip)::int AS flips,
               count(*) FILTER (WHERE flip OR retry_pass)::int AS flaky_results,
               sum(CASE WHEN NOT ok THEN duration_ms WHEN retry_pass THEN duration_ms * (attempts - 1)::float8 / attempts ELSE 0 END)::float8 AS lost_ms,
               (array_agg(ok ORDER BY at, run_id, position))[1] AS first_ok,
               (array_agg(retry_pass ORDER BY at, run_id, position))[1] AS first_retry,
               min(at) AS first_at,
               (array_agg(run_id ORDER BY at, run_id, position))[1] AS first_run,
               (array_agg(position ORDER BY at, run_id, position))[1] AS first_pos,
               (array_agg(ok ORDER BY at DESC, run_id DESC, position DESC))[1] AS last_ok,
               max(at) AS last_at,
               (array_agg(run_id ORDER BY at DESC, run_id DESC, position DESC))[1] AS last_run,
               (array_agg(position ORDER BY at DESC, run_id DESC, position DESC))[1] AS last_pos,
               min(at) FILTER (WHERE flip OR retry_pass) AS first_flaky,
               max(at) FILTER (WHERE flip OR retry_pass) AS last_flaky
        FROM flagged GROUP BY day, identity
    ), a AS (
        SELECT project_id, day, identity,
               (array_agg(feature_path ORDER BY at DESC, run_id DESC, position DESC))[1] AS feature_path,
               (array_agg(name ORDER BY at DESC, run_id DESC, position DESC))[1] AS name,
               (array_agg(example_row ORDER BY at DESC, run_id DESC, position DESC))[1] AS example_row,
               count(*)::int AS total,
               count(*) FILTER (WHERE status = 'passed')::int AS passed,
               count(*) FILTER (WHERE status IN ('failed', 'ambiguous'))::int AS failed,
               count(*) FILTER (WHERE status = 'undefined')::int AS undefined,
               count(*) FILTER (WHERE status = 'skipped')::int AS skipped,
               count(*) FILTER (WHERE status = 'pending')::int AS pending,
               count(*) FILTER (WHERE status = 'passed' AND attempts > 1)::int AS retry_passes,
               coalesce(sum(heals) FILTER (WHERE outcome), 0)::bigint AS heals
        FROM res GROUP BY project_id, day, identity
    )
    SELECT a.project_id, a.day, a.identity, a.feature_path, a.name, a.example_row, a.total, a.passed, a.failed, a.undefined,
           a.skipped, a.pending, a.retry_passes, coalesce(o.n, 0), coalesce(o.flips, 0), coalesce(o.flaky_results, 0),
           coalesce(o.lost_ms, 0), a.heals, o.first_ok, o.first_retry, o.first_at, o.first_run, o.first_pos,
           o.last_ok, o.last_at, o.last_run, o.last_pos, o.first_flaky, o.last_flaky,
           coalesce(h.dur_hist, '{}'), coalesce(h.pf_hist, '{}')
    FROM a LEFT JOIN o ON o.day = a.day AND o.identity = a.identity LEFT JOIN h ON h.day = a.day AND h.identity = a.identity
$$;

CREATE OR REPLACE FUNCTION stats_run_day_compute(p_project uuid, p_from timestamptz, p_to timestamptz, p_run uuid)
RETURNS SETOF stats_run_days LANGUAGE sql STABLE AS $$
    WITH r AS (
        SELECT (coalesce(started_at, created_at) AT TIME ZONE 'UTC')::date AS day, status,
               extract(epoch FROM finished_at - started_at) * 1000 AS dur
        FROM runs
        WHERE project_id = p_project AND status NOT IN ('queued', 'running')
          AND coalesce(started_at, created_at) >= p_from AND coalesce(started_at, created_at) < p_to
          AND (p_run IS NULL OR id = p_run)
    ), hb AS (
        SELECT day, stats_band(dur::float8) AS band, count(*) AS c, sum(dur)::float8 AS s FROM r WHERE dur IS NOT NULL GROUP BY 1, 2
    ), h AS (
        SELECT day, array_agg(ROW(band, c, s)::stats_bin ORDER BY band) AS hist FROM hb GROUP BY 1
    ), n AS (
        SELECT day, count(*)::int AS runs, count(*) FILTER (WHERE status = 'passed')::int AS passed, count(*) FILTER (WHERE status = 'failed')::int AS failed,
               count(*) FILTER (WHERE status = 'errored')::int AS errored, count(*) FILTER (WHERE status = 'cancelled')::int AS cancelled,
               count(*) FILTER (WHERE status = 'timed_out')::int AS timed_out
        FROM r GROUP BY day
    ), rs AS (
        SELECT (coalesce(r.started_at, r.created_at) AT TIME ZONE 'UTC')::date AS day, rs.status, rs.attempts, rs.duration_ms AS dur
        FROM runs r JOIN run_scenarios rs ON rs.run_id = r.id
        WHERE r.project_id = p_project AND r.status NOT IN ('queued', 'running')
          AND coalesce(r.started_at, r.created_at) >= p_from AND coalesce(r.started_at, r.created_at) < p_to
          AND (p_run IS NULL OR r.id = p_run)
    ), sn AS (
        SELECT day, count(*)::int AS total, count(*) FILTER (WHERE status = 'passed')::int AS passed,
               count(*) FILTER (WHERE status IN ('failed', 'ambiguous'))::int AS failed, count(*) FILTER (WHERE status = 'skipped')::int AS skipped,
               count(*) FILTER (WHERE status = 'pending')::int AS pending, count(*) FILTER (WHERE status = 'undefined')::int AS undefined,
               count(*) FILTER (WHERE status = 'passed' AND attempts > 1)::int AS flaky
        FROM rs GROUP BY day
    ), shb AS (
        SELECT day, stats_band(dur) AS band, count(*) AS c, sum(dur)::float8 AS s FROM rs WHERE dur IS NOT NULL GROUP BY 1, 2
    ), sh AS (
        SELECT day, array_agg(ROW(band, c, s)::stats_bin ORDER BY band) AS hist FROM shb GROUP BY 1
    )
    SELECT p_project, n.day, n.runs, n.passed, n.failed, n.errored, n.cancelled, n.timed_out, coalesce(h.hist, '{}'),
           coalesce(sn.total, 0), coalesce(sn.passed, 0), coalesce(sn.failed, 0), coalesce(sn.skipped, 0), coalesce(sn.pending, 0),
           coalesce(sn.undefined, 0), coalesce(sn.flaky, 0), coalesce(sh.hist, '{}')
    FROM n LEFT JOIN h ON h.day = n.day LEFT JOIN sn ON sn.day = n.day LEFT JOIN sh ON sh.day = n.day
$$;

CREATE OR REPLACE FUNCTION stats_step_day_compute(p_project uuid, p_from timestamptz, p_to timestamptz, p_run uuid)
RETURNS SETOF stats_step_days LANGUAGE sql STABLE AS $$
    WITH st AS (
        SELECT (coalesce(r.started_at, r.created_at) AT TIME ZONE 'UTC')::date AS day,
               coalesce(x->>'keyword', '') AS keyword, coalesce(x->>'text', '') AS text, (x->>'durationMs')::float8 AS dur
        FROM runs r JOIN run_scenarios rs ON rs.run_id = r.id,
             jsonb_array_elements(CASE WHEN jsonb_typeof(rs.steps) = 'array' THEN rs.steps ELSE '[]'::jsonb END) x
        WHERE r.project_id = p_project AND r.status NOT IN ('queued', 'running')
          AND coalesce(r.started_at, r.created_at) >= p_from AND coalesce(r.started_at, r.created_at) < p_to
          AND (p_run IS NULL OR r.id = p_run)
          AND jsonb_typeof(x->'durationMs') = 'number'
    ), hb AS (
        SELECT day, keyword, text, stats_band(dur) AS band, count(*) AS c, sum(dur) AS s FROM st GROUP BY 1, 2, 3, 4
    )
    SELECT p_project, day, keyword, text, sum(c)::int, array_agg(ROW(band, c, s)::stats_bin ORDER BY band)
    FROM hb GROUP BY day, keyword, text
$$;

DROP FUNCTION stats_rollup_settle(boolean, uuid[], uuid, text);
DROP FUNCTION stats_rollup_drain(uuid, int);
DROP FUNCTION stats_rollup_apply(runs);
DROP FUNCTION stats_rollup_lock(uuid);
DROP TABLE stats_rollup_pending;
