-- Statistics rollup (docs/stats.md, "Daily rollup"): one row per project, UTC day and scenario
-- identity holding what the flaky and trend figures need of that day's results, so that the
-- statistics endpoints read days instead of results. The row is kept current by the statement that
-- finishes a run (a trigger on runs), in the same transaction; nothing else writes it.

-- Durations are kept as histograms: arrays of stats_bin (band, count, sum of durations in ms) in
-- band order, where band 0 holds durations under 1 ms and band b ≥ 1 those in
-- [2^((b−1)/8), 2^(b/8)) ms (bands 9 % wide). A percentile over a histogram is percentile_cont
-- over its durations with each band's durations taken at their mean: exact when the durations that
-- share a band are equal, otherwise within the band's width.
CREATE TYPE stats_bin AS (band integer, c bigint, s float8);

CREATE FUNCTION stats_band(ms float8) RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN ms < 1 THEN 0 ELSE 1 + floor(8 * ln(ms) / ln(2))::int END
$$;

-- stats_hist_merge adds two histograms.
CREATE FUNCTION stats_hist_merge(a stats_bin[], b stats_bin[]) RETURNS stats_bin[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(array_agg(ROW(band, c, s)::stats_bin ORDER BY band), '{}')
    FROM (SELECT band, sum(c)::bigint AS c, sum(s) AS s
          FROM (SELECT * FROM unnest(coalesce(a, '{}')) UNION ALL SELECT * FROM unnest(coalesce(b, '{}'))) e
          GROUP BY band) g
$$;

-- stats_hist_pct is the continuous percentile q of a histogram (NaN when empty), as
-- percentile_cont: the value at position q·(n − 1), interpolated between its neighbours. The
-- statistics queries compute the same inline over many histograms at once.
CREATE FUNCTION stats_hist_pct(h stats_bin[], q float8) RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    WITH p AS (
        SELECT s / c AS v, c, (sum(c) OVER (ORDER BY band) - c)::float8 AS before, (sum(c) OVER ())::float8 AS n FROM unnest(coalesce(h, '{}')) WHERE c > 0
    ), k AS (
        SELECT q * (max(n) - 1) AS pos FROM p
    ), lo AS (
        SELECT v FROM p, k WHERE floor(k.pos) >= p.before AND floor(k.pos) < p.before + p.c
    ), hi AS (
        SELECT v FROM p, k WHERE ceil(k.pos) >= p.before AND ceil(k.pos) < p.before + p.c
    )
    SELECT coalesce((SELECT lo.v + (k.pos - floor(k.pos)) * (hi.v - lo.v) FROM lo, hi, k), 'NaN'::float8)
$$;

CREATE TABLE stats_scenario_days (
    project_id    uuid        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    day           date        NOT NULL, -- the UTC day of the run time, coalesce(started_at, created_at)
    identity      text        NOT NULL,
    feature_path  text        NOT NULL, -- of the day's last result
    name          text        NOT NULL,
    example_row   integer,
    total         integer     NOT NULL, -- results by status
    passed        integer     NOT NULL,
    failed        integer     NOT NULL, -- failed + ambiguous
    undefined     integer     NOT NULL,
    skipped       integer     NOT NULL,
    pending       integer     NOT NULL,
    retry_passes  integer     NOT NULL, -- passed with attempts > 1
    n             integer     NOT NULL, -- outcomes: passed, failed, undefined, ambiguous
    flips         integer     NOT NULL, -- between consecutive outcomes of the day
    flaky_results integer     NOT NULL, -- outcomes that are a flip within the day or a retry pass
    lost_ms       float8      NOT NULL,
    heals         bigint      NOT NULL, -- heals on the steps of outcomes
    first_ok      boolean, first_retry boolean, first_at timestamptz, first_run uuid, first_pos integer,
    last_ok       boolean, last_at timestamptz, last_run uuid, last_pos integer,
    first_flaky   timestamptz,
    last_flaky    timestamptz,
    dur_hist      stats_bin[] NOT NULL DEFAULT '{}', -- durations of every result that has one
    pf_hist       stats_bin[] NOT NULL DEFAULT '{}', -- durations of passed and failed results
    PRIMARY KEY (project_id, day, identity)
);

-- The finished runs of a project's UTC day by status, with their durations (finished − started),
-- and the day's scenario results by status with their durations.
CREATE TABLE stats_run_days (
    project_id uuid    NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    day        date    NOT NULL,
    runs       integer NOT NULL,
    passed     integer NOT NULL,
    failed     integer NOT NULL,
    errored    integer NOT NULL,
    cancelled  integer NOT NULL,
    timed_out  integer NOT NULL,
    dur_hist   stats_bin[] NOT NULL,
    -- the day's scenario results by status, with their durations (trends read these)
    s_total     integer NOT NULL,
    s_passed    integer NOT NULL,
    s_failed    integer NOT NULL, -- failed + ambiguous
    s_skipped   integer NOT NULL,
    s_pending   integer NOT NULL,
    s_undefined integer NOT NULL,
    s_flaky     integer NOT NULL, -- passed with attempts > 1
    s_hist      stats_bin[] NOT NULL,
    PRIMARY KEY (project_id, day)
);

-- The steps of a project's UTC day that recorded a duration, per keyword and text.
CREATE TABLE stats_step_days (
    project_id uuid    NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    day        date    NOT NULL,
    keyword    text    NOT NULL,
    text       text    NOT NULL,
    count      integer NOT NULL,
    dur_hist   stats_bin[] NOT NULL,
    PRIMARY KEY (project_id, day, keyword, text)
);

-- The failures of a project's UTC day per identity and failure signature, with the failing step
-- (keyword + text) and, for a browser step acting on an element, its locator.
CREATE TABLE stats_failure_days (
    project_id   uuid        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    day          date        NOT NULL,
    identity     text        NOT NULL,
    signature    text        NOT NULL,
    step_keyword text        NOT NULL,
    step_text    text        NOT NULL,
    locator      text,
    count        integer     NOT NULL,
    first_at     timestamptz NOT NULL,
    last_at      timestamptz NOT NULL
);
CREATE UNIQUE INDEX stats_failure_days_key ON stats_failure_days (project_id, day, identity, signature, step_keyword, step_text);
CREATE INDEX stats_failure_days_identity_idx ON stats_failure_days (project_id, identity, day);

-- stats_failure_compute summarises failures as stats_failure_days holds them (same arguments as
-- stats_rollup_compute).
CREATE FUNCTION stats_failure_compute(p_project uuid, p_from timestamptz, p_to timestamptz, p_run uuid, p_identities text[])
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

-- The heals recorded on results' steps, one row per heal: the heal statistics read this view.
CREATE VIEW stats_heals AS
SELECT rs.run_id, rs.identity, rs.feature_path, rs.name, rs.example_row, rs.tags,
       coalesce(x->>'oldSelector', '') AS old_selector, coalesce(x->>'newSelector', '') AS new_selector,
       coalesce(x->>'strategy', '') AS strategy, coalesce((x->>'score')::float8, 0) AS score
FROM run_scenarios rs,
     jsonb_array_elements(CASE WHEN jsonb_typeof(rs.steps) = 'array' THEN rs.steps ELSE '[]'::jsonb END) st,
     jsonb_array_elements(CASE WHEN jsonb_typeof(st->'heals') = 'array' THEN st->'heals' ELSE '[]'::jsonb END) x
WHERE rs.heals > 0;

-- The heals of a project's UTC day per identity, replaced selector, replacement and strategy.
CREATE TABLE stats_heal_days (
    project_id   uuid        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    day          date        NOT NULL,
    identity     text        NOT NULL,
    old_selector text        NOT NULL,
    new_selector text        NOT NULL,
    strategy     text        NOT NULL,
    count        integer     NOT NULL,
    score_sum    float8      NOT NULL,
    last_at      timestamptz NOT NULL,
    PRIMARY KEY (project_id, day, identity, old_selector, new_selector, strategy)
);

-- stats_heal_compute summarises heals as stats_heal_days holds them.
CREATE FUNCTION stats_heal_compute(p_project uuid, p_from timestamptz, p_to timestamptz, p_run uuid)
RETURNS SETOF stats_heal_days LANGUAGE sql STABLE AS $$
    SELECT r.project_id, (coalesce(r.started_at, r.created_at) AT TIME ZONE 'UTC')::date, sh.identity, sh.old_selector, sh.new_selector,
           sh.strategy, count(*)::int, sum(sh.score), max(coalesce(r.started_at, r.created_at))
    FROM runs r JOIN stats_heals sh ON sh.run_id = r.id
    WHERE r.project_id = p_project AND r.status NOT IN ('queued', 'running')
      AND coalesce(r.started_at, r.created_at) >= p_from AND coalesce(r.started_at, r.created_at) < p_to
      AND (p_run IS NULL OR r.id = p_run)
    GROUP BY 1, 2, 3, 4, 5, 6
$$;

-- stats_rollup_compute summarises the results of the finished runs of a project whose run time is in
-- [p_from, p_to) — only run p_run when given, only identity p_identity when given — per UTC day and
-- identity, in the shape of stats_scenario_days. Outcomes are ordered by run time, run id, position.
CREATE FUNCTION stats_rollup_compute(p_project uuid, p_from timestamptz, p_to timestamptz, p_run uuid, p_identities text[])
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

-- stats_run_day_compute summarises a project's finished runs of [p_from, p_to) (only run p_run when
-- given) per UTC day, as stats_run_days holds them.
CREATE FUNCTION stats_run_day_compute(p_project uuid, p_from timestamptz, p_to timestamptz, p_run uuid)
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

-- stats_step_day_compute summarises the steps with a duration of a project's results (same
-- arguments as stats_rollup_compute), as stats_step_days holds them.
CREATE FUNCTION stats_step_day_compute(p_project uuid, p_from timestamptz, p_to timestamptz, p_run uuid)
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

-- stats_rollup_recompute rebuilds the rows of a project's UTC day (only the given identities, when
-- given) from its results.
CREATE FUNCTION stats_rollup_recompute(p_project uuid, p_day date, p_identities text[]) RETURNS void LANGUAGE sql AS $$
    DELETE FROM stats_scenario_days WHERE project_id = p_project AND day = p_day AND (p_identities IS NULL OR identity = ANY(p_identities));
    INSERT INTO stats_scenario_days
    SELECT * FROM stats_rollup_compute(p_project, p_day::timestamp AT TIME ZONE 'UTC', (p_day + 1)::timestamp AT TIME ZONE 'UTC', NULL, p_identities);
    DELETE FROM stats_failure_days WHERE project_id = p_project AND day = p_day AND (p_identities IS NULL OR identity = ANY(p_identities));
    INSERT INTO stats_failure_days
    SELECT * FROM stats_failure_compute(p_project, p_day::timestamp AT TIME ZONE 'UTC', (p_day + 1)::timestamp AT TIME ZONE 'UTC', NULL, p_identities);
$$;

-- stats_rollup_recompute_day rebuilds every rollup row of a project's UTC day.
CREATE FUNCTION stats_rollup_recompute_day(p_project uuid, p_day date) RETURNS void LANGUAGE sql AS $$
    SELECT stats_rollup_recompute(p_project, p_day, NULL);
    DELETE FROM stats_run_days WHERE project_id = p_project AND day = p_day;
    INSERT INTO stats_run_days SELECT * FROM stats_run_day_compute(p_project, p_day::timestamp AT TIME ZONE 'UTC', (p_day + 1)::timestamp AT TIME ZONE 'UTC', NULL);
    DELETE FROM stats_step_days WHERE project_id = p_project AND day = p_day;
    INSERT INTO stats_step_days SELECT * FROM stats_step_day_compute(p_project, p_day::timestamp AT TIME ZONE 'UTC', (p_day + 1)::timestamp AT TIME ZONE 'UTC', NULL);
    DELETE FROM stats_heal_days WHERE project_id = p_project AND day = p_day;
    INSERT INTO stats_heal_days SELECT * FROM stats_heal_compute(p_project, p_day::timestamp AT TIME ZONE 'UTC', (p_day + 1)::timestamp AT TIME ZONE 'UTC', NULL);
$$;

-- stats_rollup_rebuild rebuilds a project's whole rollup from its results (after a bulk load).
CREATE FUNCTION stats_rollup_rebuild(p_project uuid) RETURNS void LANGUAGE sql AS $$
    DELETE FROM stats_scenario_days WHERE project_id = p_project;
    INSERT INTO stats_scenario_days SELECT * FROM stats_rollup_compute(p_project, '-infinity', 'infinity', NULL, NULL);
    DELETE FROM stats_failure_days WHERE project_id = p_project;
    INSERT INTO stats_failure_days SELECT * FROM stats_failure_compute(p_project, '-infinity', 'infinity', NULL, NULL);
    DELETE FROM stats_run_days WHERE project_id = p_project;
    INSERT INTO stats_run_days SELECT * FROM stats_run_day_compute(p_project, '-infinity', 'infinity', NULL);
    DELETE FROM stats_step_days WHERE project_id = p_project;
    INSERT INTO stats_step_days SELECT * FROM stats_step_day_compute(p_project, '-infinity', 'infinity', NULL);
    DELETE FROM stats_heal_days WHERE project_id = p_project;
    INSERT INTO stats_heal_days SELECT * FROM stats_heal_compute(p_project, '-infinity', 'infinity', NULL);
$$;

-- A run that finishes adds its results to its day. When they come after every outcome the day
-- already holds for their identities (the usual case), they are merged into the rows; otherwise (a
-- run started before another that finished first, history ingested late) those identities' day is
-- recomputed from its results. A finished run that changes again (another document ingested into
-- it) has its old and new day recomputed.
CREATE FUNCTION stats_rollup_run() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE TRIGGER runs_stats_rollup_insert AFTER INSERT ON runs
    FOR EACH ROW WHEN (NEW.status NOT IN ('queued', 'running')) EXECUTE FUNCTION stats_rollup_run();
CREATE TRIGGER runs_stats_rollup_update AFTER UPDATE ON runs
    FOR EACH ROW WHEN (NEW.status NOT IN ('queued', 'running') AND (OLD.status IN ('queued', 'running')
        OR OLD.status IS DISTINCT FROM NEW.status OR OLD.counts IS DISTINCT FROM NEW.counts
        OR OLD.started_at IS DISTINCT FROM NEW.started_at OR OLD.project_id IS DISTINCT FROM NEW.project_id))
    EXECUTE FUNCTION stats_rollup_run();

-- Existing history.
SELECT stats_rollup_rebuild(id) FROM projects;


-- The run list filtered by project and status, newest first (issue 31, item 3).
CREATE INDEX runs_project_status_idx ON runs (project_id, status, created_at DESC, id DESC);
