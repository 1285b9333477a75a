-- Statistics over runs and their scenario results (docs/stats.md). Every query takes the same
-- scope: the caller's workspaces (or all, for instance admins), optionally one workspace, project,
-- branch, environment, trigger and scenario tag, and a window [since, until) on the time a run
-- happened (started, else created). Unfinished runs take no part.

-- name: StatsTrendRuns :many
SELECT (date_trunc(sqlc.arg('bucket')::text, coalesce(r.started_at, r.created_at) AT TIME ZONE sqlc.arg('tz')::text) AT TIME ZONE sqlc.arg('tz')::text)::timestamptz AS at,
       count(*)::bigint AS runs,
       count(*) FILTER (WHERE r.status = 'passed')::bigint AS passed,
       count(*) FILTER (WHERE r.status = 'failed')::bigint AS failed,
       count(*) FILTER (WHERE r.status = 'errored')::bigint AS errored,
       count(*) FILTER (WHERE r.status = 'cancelled')::bigint AS cancelled,
       count(*) FILTER (WHERE r.status = 'timed_out')::bigint AS timed_out,
       coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM r.finished_at - r.started_at) * 1000)
           FILTER (WHERE r.finished_at IS NOT NULL AND r.started_at IS NOT NULL), 'NaN')::float8 AS run_p50_ms,
       coalesce(percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM r.finished_at - r.started_at) * 1000)
           FILTER (WHERE r.finished_at IS NOT NULL AND r.started_at IS NOT NULL), 'NaN')::float8 AS run_p95_ms
FROM runs r JOIN projects p ON p.id = r.project_id
WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
  AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
  AND (sqlc.narg('branch')::text IS NULL OR r.branch = sqlc.narg('branch')::text)
  AND (sqlc.narg('environment')::text IS NULL OR r.environment = sqlc.narg('environment')::text)
  AND (sqlc.narg('trigger')::text IS NULL OR r.trigger = sqlc.narg('trigger')::text)
  AND r.status NOT IN ('queued', 'running')
  AND coalesce(r.started_at, r.created_at) >= sqlc.arg('since')::timestamptz AND coalesce(r.started_at, r.created_at) < sqlc.arg('until')::timestamptz
  AND (sqlc.narg('tag')::text IS NULL OR EXISTS (SELECT 1 FROM run_scenarios rs WHERE rs.run_id = r.id AND sqlc.narg('tag')::text = ANY(rs.tags)))
GROUP BY 1 ORDER BY 1;

-- name: StatsTrendScenarios :many
SELECT (date_trunc(sqlc.arg('bucket')::text, coalesce(r.started_at, r.created_at) AT TIME ZONE sqlc.arg('tz')::text) AT TIME ZONE sqlc.arg('tz')::text)::timestamptz AS at,
       count(*)::bigint AS total,
       count(*) FILTER (WHERE rs.status = 'passed')::bigint AS passed,
       count(*) FILTER (WHERE rs.status IN ('failed', 'ambiguous'))::bigint AS failed,
       count(*) FILTER (WHERE rs.status = 'skipped')::bigint AS skipped,
       count(*) FILTER (WHERE rs.status = 'pending')::bigint AS pending,
       count(*) FILTER (WHERE rs.status = 'undefined')::bigint AS undefined,
       count(*) FILTER (WHERE rs.status = 'passed' AND rs.attempts > 1)::bigint AS flaky,
       coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY rs.duration_ms) FILTER (WHERE rs.duration_ms IS NOT NULL), 'NaN')::float8 AS p50_ms,
       coalesce(percentile_cont(0.95) WITHIN GROUP (ORDER BY rs.duration_ms) FILTER (WHERE rs.duration_ms IS NOT NULL), 'NaN')::float8 AS p95_ms
FROM runs r JOIN projects p ON p.id = r.project_id JOIN run_scenarios rs ON rs.run_id = r.id
WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
  AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
  AND (sqlc.narg('branch')::text IS NULL OR r.branch = sqlc.narg('branch')::text)
  AND (sqlc.narg('environment')::text IS NULL OR r.environment = sqlc.narg('environment')::text)
  AND (sqlc.narg('trigger')::text IS NULL OR r.trigger = sqlc.narg('trigger')::text)
  AND r.status NOT IN ('queued', 'running')
  AND coalesce(r.started_at, r.created_at) >= sqlc.arg('since')::timestamptz AND coalesce(r.started_at, r.created_at) < sqlc.arg('until')::timestamptz
  AND (sqlc.narg('tag')::text IS NULL OR sqlc.narg('tag')::text = ANY(rs.tags))
GROUP BY 1 ORDER BY 1;

-- name: StatsTrendSummary :one
-- The window's totals, for the period-over-period change.
WITH rr AS (
    SELECT r.* FROM runs r JOIN projects p ON p.id = r.project_id
    WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
  AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
  AND (sqlc.narg('branch')::text IS NULL OR r.branch = sqlc.narg('branch')::text)
  AND (sqlc.narg('environment')::text IS NULL OR r.environment = sqlc.narg('environment')::text)
  AND (sqlc.narg('trigger')::text IS NULL OR r.trigger = sqlc.narg('trigger')::text)
  AND r.status NOT IN ('queued', 'running')
      AND coalesce(r.started_at, r.created_at) >= sqlc.arg('since')::timestamptz AND coalesce(r.started_at, r.created_at) < sqlc.arg('until')::timestamptz
      AND (sqlc.narg('tag')::text IS NULL OR EXISTS (SELECT 1 FROM run_scenarios rs WHERE rs.run_id = r.id AND sqlc.narg('tag')::text = ANY(rs.tags)))
)
SELECT (SELECT count(*) FROM rr)::bigint AS runs,
       (SELECT count(*) FROM rr WHERE status = 'passed')::bigint AS passed,
       (SELECT count(*) FROM rr WHERE status <> 'cancelled')::bigint AS finished,
       (SELECT coalesce(percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - started_at) * 1000)
           FILTER (WHERE finished_at IS NOT NULL AND started_at IS NOT NULL), 'NaN') FROM rr)::float8 AS run_p95_ms,
       (SELECT count(*) FROM rr JOIN run_scenarios rs ON rs.run_id = rr.id WHERE (sqlc.narg('tag')::text IS NULL OR sqlc.narg('tag')::text = ANY(rs.tags)))::bigint AS scenarios,
       (SELECT count(*) FROM rr JOIN run_scenarios rs ON rs.run_id = rr.id WHERE (sqlc.narg('tag')::text IS NULL OR sqlc.narg('tag')::text = ANY(rs.tags))
           AND rs.status IN ('failed', 'undefined', 'ambiguous'))::bigint AS scenario_failures,
       (SELECT count(*) FROM rr JOIN run_scenarios rs ON rs.run_id = rr.id WHERE (sqlc.narg('tag')::text IS NULL OR sqlc.narg('tag')::text = ANY(rs.tags))
           AND rs.status = 'passed' AND rs.attempts > 1)::bigint AS flaky;

-- name: StatsFlaky :many
-- One row per scenario identity with at least min_results outcomes; every metric as docs/stats.md
-- defines it. The failing step and locator are looked up for the page's rows only.
WITH res AS (
    SELECT r.project_id, p.slug, rs.identity, rs.feature_path, rs.name, rs.example_row, rs.attempts,
           coalesce(rs.duration_ms, 0) AS duration_ms, coalesce(r.started_at, r.created_at) AS at, r.id AS run_id,
           CASE WHEN rs.status = 'passed' THEN 1 ELSE 0 END AS ok, rs.heals, rs.position
    FROM runs r JOIN projects p ON p.id = r.project_id JOIN run_scenarios rs ON rs.run_id = r.id
    WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
  AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
  AND (sqlc.narg('branch')::text IS NULL OR r.branch = sqlc.narg('branch')::text)
  AND (sqlc.narg('environment')::text IS NULL OR r.environment = sqlc.narg('environment')::text)
  AND (sqlc.narg('trigger')::text IS NULL OR r.trigger = sqlc.narg('trigger')::text)
  AND r.status NOT IN ('queued', 'running')
      AND coalesce(r.started_at, r.created_at) >= sqlc.arg('since')::timestamptz AND coalesce(r.started_at, r.created_at) < sqlc.arg('until')::timestamptz
      AND (sqlc.narg('tag')::text IS NULL OR sqlc.narg('tag')::text = ANY(rs.tags))
      AND rs.status IN ('passed', 'failed', 'undefined', 'ambiguous')
      AND (sqlc.narg('max_failed_share')::float8 IS NULL
           OR coalesce((r.counts->>'failed')::float8 / nullif((r.counts->>'total')::float8, 0), 0) <= sqlc.narg('max_failed_share')::float8)
), seq AS (
    SELECT res.*, lag(ok) OVER (PARTITION BY project_id, identity ORDER BY at, run_id, position) AS prev FROM res
), flagged AS (
    SELECT seq.*, (prev IS NOT NULL AND prev <> ok) AS flip, (ok = 1 AND attempts > 1) AS retry_pass FROM seq
), agg AS (
    SELECT project_id, identity, max(slug) AS slug,
           (array_agg(feature_path ORDER BY at DESC, run_id DESC))[1] AS feature_path,
           (array_agg(name ORDER BY at DESC, run_id DESC))[1] AS name,
           (array_agg(example_row ORDER BY at DESC, run_id DESC))[1] AS example_row,
           (array_agg(run_id ORDER BY at DESC, run_id DESC))[1] AS last_run_id,
           count(*)::float8 AS n,
           sum(ok)::float8 AS passed,
           count(*) FILTER (WHERE flip)::float8 AS flips,
           count(*) FILTER (WHERE retry_pass)::float8 AS retry_passes,
           count(*) FILTER (WHERE flip OR retry_pass)::float8 AS flaky_results,
           sum(CASE WHEN ok = 0 THEN duration_ms WHEN retry_pass THEN duration_ms * (attempts - 1)::float8 / attempts ELSE 0 END)::float8 AS lost,
           min(at) FILTER (WHERE flip OR retry_pass) AS first_flaky,
           max(at) FILTER (WHERE flip OR retry_pass) AS last_flaky,
           sum(heals)::bigint AS heals
    FROM flagged GROUP BY project_id, identity
    HAVING count(*) >= sqlc.arg('min_results')::int
       AND (NOT sqlc.arg('flaky_only')::boolean OR count(*) FILTER (WHERE flip OR retry_pass) > 0)
), m AS (
    SELECT agg.*,
           (n - passed) / n AS failure_rate,
           passed / n AS pass_rate,
           CASE WHEN n > 1 THEN flips / (n - 1) ELSE 0 END AS flip_rate,
           retry_passes / n AS retry_pass_rate,
           flaky_results / n AS flaky_rate
    FROM agg
), v AS (
    SELECT m.*, pass_rate * (1 - flip_rate) AS health, flip_rate * n AS volume,
           CASE sqlc.arg('sort')::text
               WHEN 'flipRate' THEN flip_rate WHEN 'retryPassRate' THEN retry_pass_rate WHEN 'failureRate' THEN failure_rate
               WHEN 'passRate' THEN pass_rate WHEN 'health' THEN pass_rate * (1 - flip_rate) WHEN 'flakinessVolume' THEN flip_rate * n
               WHEN 'durationLostMs' THEN lost WHEN 'results' THEN n WHEN 'lastFlakyAt' THEN coalesce(extract(epoch FROM last_flaky)::float8, 0)
               ELSE flaky_rate END AS sort_value
    FROM m
), page AS (
    SELECT * FROM v
    ORDER BY CASE WHEN sqlc.arg('descending')::boolean THEN sort_value END DESC,
             CASE WHEN NOT sqlc.arg('descending')::boolean THEN sort_value END ASC, slug, feature_path, name, identity
    LIMIT sqlc.arg('row_limit') OFFSET sqlc.arg('row_offset')
)
SELECT page.project_id, page.identity, page.slug::text AS project, page.feature_path::text AS feature_path, page.name::text AS scenario,
       coalesce(page.example_row, -1)::int AS example_row, page.last_run_id::uuid AS last_run_id,
       page.n::bigint AS results, page.passed::bigint AS passed, page.flips::bigint AS flips, page.retry_passes::bigint AS retry_passes,
       page.flaky_results::bigint AS flaky_results, page.flip_rate::float8 AS flip_rate, page.flaky_rate::float8 AS flaky_rate,
       page.retry_pass_rate::float8 AS retry_pass_rate, page.failure_rate::float8 AS failure_rate, page.pass_rate::float8 AS pass_rate,
       page.health::float8 AS health, page.volume::float8 AS volume, round(page.lost)::bigint AS duration_lost_ms,
       coalesce(page.first_flaky, 'epoch')::timestamptz AS first_flaky_at, coalesce(page.last_flaky, 'epoch')::timestamptz AS last_flaky_at, page.heals::bigint AS heals,
       coalesce(fs.keyword, '')::text AS step_keyword, coalesce(fs.text, '')::text AS step_text, coalesce(fs.c, 0)::bigint AS step_count,
       coalesce(fl.locator, '')::text AS locator, coalesce(fl.c, 0)::bigint AS locator_count
FROM page
LEFT JOIN LATERAL (
    SELECT coalesce(stats_failing_step(rs.steps)->>'keyword', '') AS keyword, coalesce(stats_failing_step(rs.steps)->>'text', '') AS text, count(*) AS c
    FROM run_scenarios rs JOIN runs r ON r.id = rs.run_id
    WHERE rs.identity = page.identity AND r.project_id = page.project_id AND rs.failure_signature IS NOT NULL
      AND coalesce(r.started_at, r.created_at) >= sqlc.arg('since')::timestamptz AND coalesce(r.started_at, r.created_at) < sqlc.arg('until')::timestamptz AND stats_failing_step(rs.steps) IS NOT NULL
    GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2 LIMIT 1) fs ON true
LEFT JOIN LATERAL (
    SELECT stats_locator(stats_failing_step(rs.steps)->>'text') AS locator, count(*) AS c
    FROM run_scenarios rs JOIN runs r ON r.id = rs.run_id
    WHERE rs.identity = page.identity AND r.project_id = page.project_id AND rs.failure_signature IS NOT NULL
      AND coalesce(r.started_at, r.created_at) >= sqlc.arg('since')::timestamptz AND coalesce(r.started_at, r.created_at) < sqlc.arg('until')::timestamptz AND stats_locator(stats_failing_step(rs.steps)->>'text') IS NOT NULL
    GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 1) fl ON true
ORDER BY CASE WHEN sqlc.arg('descending')::boolean THEN page.sort_value END DESC,
         CASE WHEN NOT sqlc.arg('descending')::boolean THEN page.sort_value END ASC, page.slug, page.feature_path, page.name, page.identity;

-- name: StatsVersions :one
-- The statistics versions (schema 000027) of the projects a scope covers, as "id:version" in id
-- order: the key the flaky answer is cached under. Any rollup change, project added to or removed
-- from the scope, or rename gives a different text.
SELECT coalesce(string_agg(p.id::text || ':' || coalesce(v.version, 0)::text, ',' ORDER BY p.id), '')::text AS versions
FROM projects p LEFT JOIN stats_versions v ON v.project_id = p.id
WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
  AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text);

-- name: StatsFlakyRollup :many
-- StatsFlaky over the daily rollup (stats_scenario_days, stats_failure_days) for a window of whole
-- UTC days [since_day, until_day) without branch, environment, trigger, tag or failed-share filters:
-- the same figures, reading one row per identity and day. Days join where the last outcome of one
-- differs from the first outcome of the next day that has outcomes: one more flip, and one more flaky
-- result unless that first outcome was already one as a retry pass.
-- Only the columns summed are carried through the window and the grouping. The names and the last
-- run are those of the identity's last day in the window, read for the identities kept. (An index
-- covering the summed columns made this an index-only scan, but cost every run's finish about 10 µs
-- an identity, its rollup updates no longer heap-only; answers are cached per statistics version
-- instead: docs/stats.md, "Caching".)
WITH d AS (
    SELECT s.project_id, s.identity, s.day, s.n, s.passed, s.flips, s.retry_passes, s.flaky_results, s.lost_ms, s.heals,
           s.first_retry, s.first_at, s.first_flaky, s.last_flaky,
           coalesce(lag(s.last_ok) OVER (PARTITION BY s.project_id, s.identity ORDER BY s.day) <> s.first_ok, false) AS boundary
    FROM stats_scenario_days s
    WHERE s.project_id IN (SELECT p.id FROM projects p
                           WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
                             AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
                             AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text))
      AND s.day >= sqlc.arg('since_day')::date AND s.day < sqlc.arg('until_day')::date AND s.n > 0
), sums AS (
    SELECT project_id, identity, max(day) AS last_day,
           sum(n)::float8 AS n,
           sum(passed)::float8 AS passed,
           sum(flips + boundary::int)::float8 AS flips,
           sum(retry_passes)::float8 AS retry_passes,
           sum(flaky_results + (boundary AND NOT first_retry)::int)::float8 AS flaky_results,
           sum(lost_ms)::float8 AS lost,
           min(least(first_flaky, CASE WHEN boundary THEN first_at END)) AS first_flaky,
           max(greatest(last_flaky, CASE WHEN boundary THEN first_at END)) AS last_flaky,
           sum(heals)::bigint AS heals
    FROM d GROUP BY project_id, identity
    HAVING sum(n) >= sqlc.arg('min_results')::int
       AND (NOT sqlc.arg('flaky_only')::boolean OR sum(flaky_results + (boundary AND NOT first_retry)::int) > 0)
), agg AS (
    SELECT sums.*, p.slug, l.feature_path, l.name, l.example_row, l.last_run AS last_run_id
    FROM sums JOIN projects p ON p.id = sums.project_id
    JOIN stats_scenario_days l ON l.project_id = sums.project_id AND l.day = sums.last_day AND l.identity = sums.identity
), m AS (
    SELECT agg.*,
           (n - passed) / n AS failure_rate,
           passed / n AS pass_rate,
           CASE WHEN n > 1 THEN flips / (n - 1) ELSE 0 END AS flip_rate,
           retry_passes / n AS retry_pass_rate,
           flaky_results / n AS flaky_rate
    FROM agg
), v AS (
    SELECT m.*, pass_rate * (1 - flip_rate) AS health, flip_rate * n AS volume,
           CASE sqlc.arg('sort')::text
               WHEN 'flipRate' THEN flip_rate WHEN 'retryPassRate' THEN retry_pass_rate WHEN 'failureRate' THEN failure_rate
               WHEN 'passRate' THEN pass_rate WHEN 'health' THEN pass_rate * (1 - flip_rate) WHEN 'flakinessVolume' THEN flip_rate * n
               WHEN 'durationLostMs' THEN lost WHEN 'results' THEN n WHEN 'lastFlakyAt' THEN coalesce(extract(epoch FROM last_flaky)::float8, 0)
               ELSE flaky_rate END AS sort_value
    FROM m
), page AS (
    SELECT * FROM v
    ORDER BY CASE WHEN sqlc.arg('descending')::boolean THEN sort_value END DESC,
             CASE WHEN NOT sqlc.arg('descending')::boolean THEN sort_value END ASC, slug, feature_path, name, identity
    LIMIT sqlc.arg('row_limit') OFFSET sqlc.arg('row_offset')
)
SELECT page.project_id, page.identity::text AS identity, page.slug::text AS project, page.feature_path::text AS feature_path, page.name::text AS scenario,
       coalesce(page.example_row, -1)::int AS example_row, page.last_run_id::uuid AS last_run_id,
       page.n::bigint AS results, page.passed::bigint AS passed, page.flips::bigint AS flips, page.retry_passes::bigint AS retry_passes,
       page.flaky_results::bigint AS flaky_results, page.flip_rate::float8 AS flip_rate, page.flaky_rate::float8 AS flaky_rate,
       page.retry_pass_rate::float8 AS retry_pass_rate, page.failure_rate::float8 AS failure_rate, page.pass_rate::float8 AS pass_rate,
       page.health::float8 AS health, page.volume::float8 AS volume, round(page.lost)::bigint AS duration_lost_ms,
       coalesce(page.first_flaky, 'epoch')::timestamptz AS first_flaky_at, coalesce(page.last_flaky, 'epoch')::timestamptz AS last_flaky_at, page.heals::bigint AS heals,
       coalesce(fs.step_keyword, '')::text AS step_keyword, coalesce(fs.step_text, '')::text AS step_text, coalesce(fs.c, 0)::bigint AS step_count,
       coalesce(fl.locator, '')::text AS locator, coalesce(fl.c, 0)::bigint AS locator_count
FROM page
LEFT JOIN LATERAL (
    SELECT f.step_keyword, f.step_text, sum(f.count) AS c FROM stats_failure_days f
    WHERE f.project_id = page.project_id AND f.identity = page.identity
      AND f.day >= sqlc.arg('since_day')::date AND f.day < sqlc.arg('until_day')::date AND (f.step_keyword <> '' OR f.step_text <> '')
    GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2 LIMIT 1) fs ON true
LEFT JOIN LATERAL (
    SELECT f.locator, sum(f.count) AS c FROM stats_failure_days f
    WHERE f.project_id = page.project_id AND f.identity = page.identity
      AND f.day >= sqlc.arg('since_day')::date AND f.day < sqlc.arg('until_day')::date AND f.locator IS NOT NULL
    GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 1) fl ON true
ORDER BY CASE WHEN sqlc.arg('descending')::boolean THEN page.sort_value END DESC,
         CASE WHEN NOT sqlc.arg('descending')::boolean THEN page.sort_value END ASC, page.slug, page.feature_path, page.name, page.identity;

-- name: StatsHealByStrategy :many
WITH h AS (
    SELECT p.slug, sh.identity, sh.feature_path, sh.name, sh.example_row, coalesce(r.started_at, r.created_at) AS at,
           sh.old_selector, sh.new_selector, sh.strategy, sh.score
    FROM runs r JOIN projects p ON p.id = r.project_id JOIN stats_heals sh ON sh.run_id = r.id
    WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
  AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
  AND (sqlc.narg('branch')::text IS NULL OR r.branch = sqlc.narg('branch')::text)
  AND (sqlc.narg('environment')::text IS NULL OR r.environment = sqlc.narg('environment')::text)
  AND (sqlc.narg('trigger')::text IS NULL OR r.trigger = sqlc.narg('trigger')::text)
  AND r.status NOT IN ('queued', 'running')
      AND coalesce(r.started_at, r.created_at) >= sqlc.arg('since')::timestamptz AND coalesce(r.started_at, r.created_at) < sqlc.arg('until')::timestamptz
      AND (sqlc.narg('tag')::text IS NULL OR sqlc.narg('tag')::text = ANY(sh.tags))
)
SELECT strategy::text AS strategy, count(*)::bigint AS count, avg(score)::float8 AS avg_score FROM h GROUP BY strategy ORDER BY 2 DESC, 1;

-- name: StatsHealBySelector :many
WITH h AS (
    SELECT p.slug, sh.identity, sh.feature_path, sh.name, sh.example_row, coalesce(r.started_at, r.created_at) AS at,
           sh.old_selector, sh.new_selector, sh.strategy, sh.score
    FROM runs r JOIN projects p ON p.id = r.project_id JOIN stats_heals sh ON sh.run_id = r.id
    WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
  AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
  AND (sqlc.narg('branch')::text IS NULL OR r.branch = sqlc.narg('branch')::text)
  AND (sqlc.narg('environment')::text IS NULL OR r.environment = sqlc.narg('environment')::text)
  AND (sqlc.narg('trigger')::text IS NULL OR r.trigger = sqlc.narg('trigger')::text)
  AND r.status NOT IN ('queued', 'running')
      AND coalesce(r.started_at, r.created_at) >= sqlc.arg('since')::timestamptz AND coalesce(r.started_at, r.created_at) < sqlc.arg('until')::timestamptz
      AND (sqlc.narg('tag')::text IS NULL OR sqlc.narg('tag')::text = ANY(sh.tags))
)
SELECT slug::text AS project, old_selector::text AS selector, count(*)::bigint AS count FROM h GROUP BY slug, old_selector ORDER BY 3 DESC, 1, 2 LIMIT 50;

-- name: StatsHealByScenario :many
WITH h AS (
    SELECT p.slug, sh.identity, sh.feature_path, sh.name, sh.example_row, coalesce(r.started_at, r.created_at) AS at,
           sh.old_selector, sh.new_selector, sh.strategy, sh.score
    FROM runs r JOIN projects p ON p.id = r.project_id JOIN stats_heals sh ON sh.run_id = r.id
    WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
  AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
  AND (sqlc.narg('branch')::text IS NULL OR r.branch = sqlc.narg('branch')::text)
  AND (sqlc.narg('environment')::text IS NULL OR r.environment = sqlc.narg('environment')::text)
  AND (sqlc.narg('trigger')::text IS NULL OR r.trigger = sqlc.narg('trigger')::text)
  AND r.status NOT IN ('queued', 'running')
      AND coalesce(r.started_at, r.created_at) >= sqlc.arg('since')::timestamptz AND coalesce(r.started_at, r.created_at) < sqlc.arg('until')::timestamptz
      AND (sqlc.narg('tag')::text IS NULL OR sqlc.narg('tag')::text = ANY(sh.tags))
)
SELECT identity::text AS identity, slug::text AS project, max(feature_path)::text AS feature_path, max(name)::text AS scenario,
       coalesce(max(example_row), -1)::int AS example_row, count(*)::bigint AS count
FROM h GROUP BY slug, identity ORDER BY 6 DESC, 2, 3, 4 LIMIT 50;

-- name: StatsHealTop :many
WITH h AS (
    SELECT p.slug, sh.identity, sh.feature_path, sh.name, sh.example_row, coalesce(r.started_at, r.created_at) AS at,
           sh.old_selector, sh.new_selector, sh.strategy, sh.score
    FROM runs r JOIN projects p ON p.id = r.project_id JOIN stats_heals sh ON sh.run_id = r.id
    WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
  AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
  AND (sqlc.narg('branch')::text IS NULL OR r.branch = sqlc.narg('branch')::text)
  AND (sqlc.narg('environment')::text IS NULL OR r.environment = sqlc.narg('environment')::text)
  AND (sqlc.narg('trigger')::text IS NULL OR r.trigger = sqlc.narg('trigger')::text)
  AND r.status NOT IN ('queued', 'running')
      AND coalesce(r.started_at, r.created_at) >= sqlc.arg('since')::timestamptz AND coalesce(r.started_at, r.created_at) < sqlc.arg('until')::timestamptz
      AND (sqlc.narg('tag')::text IS NULL OR sqlc.narg('tag')::text = ANY(sh.tags))
)
SELECT slug::text AS project, old_selector::text AS old_selector, new_selector::text AS new_selector, strategy::text AS strategy,
       count(*)::bigint AS count, avg(score)::float8 AS avg_score, max(at)::timestamptz AS last_seen_at
FROM h GROUP BY slug, old_selector, new_selector, strategy ORDER BY 5 DESC, 1, 2, 3 LIMIT 20;

-- name: StatsSlowestScenarios :many
SELECT rs.identity::text AS identity, p.slug::text AS project, max(rs.feature_path)::text AS feature_path, max(rs.name)::text AS scenario,
       coalesce(max(rs.example_row), -1)::int AS example_row, count(*)::bigint AS results,
       coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY rs.duration_ms), 'NaN')::float8 AS p50_ms,
       coalesce(percentile_cont(0.95) WITHIN GROUP (ORDER BY rs.duration_ms), 'NaN')::float8 AS p95_ms
FROM runs r JOIN projects p ON p.id = r.project_id JOIN run_scenarios rs ON rs.run_id = r.id
WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
  AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
  AND (sqlc.narg('branch')::text IS NULL OR r.branch = sqlc.narg('branch')::text)
  AND (sqlc.narg('environment')::text IS NULL OR r.environment = sqlc.narg('environment')::text)
  AND (sqlc.narg('trigger')::text IS NULL OR r.trigger = sqlc.narg('trigger')::text)
  AND r.status NOT IN ('queued', 'running')
  AND coalesce(r.started_at, r.created_at) >= sqlc.arg('since')::timestamptz AND coalesce(r.started_at, r.created_at) < sqlc.arg('until')::timestamptz
  AND (sqlc.narg('tag')::text IS NULL OR sqlc.narg('tag')::text = ANY(rs.tags))
  AND rs.duration_ms IS NOT NULL AND rs.status IN ('passed', 'failed')
GROUP BY p.slug, rs.identity ORDER BY 8 DESC, 2, 3, 4 LIMIT 10;

-- name: StatsSlowestSteps :many
SELECT coalesce(st->>'keyword', '')::text AS keyword, coalesce(st->>'text', '')::text AS text, count(*)::bigint AS count,
       coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY (st->>'durationMs')::float8), 'NaN')::float8 AS p50_ms,
       coalesce(percentile_cont(0.95) WITHIN GROUP (ORDER BY (st->>'durationMs')::float8), 'NaN')::float8 AS p95_ms
FROM runs r JOIN projects p ON p.id = r.project_id JOIN run_scenarios rs ON rs.run_id = r.id,
     jsonb_array_elements(CASE WHEN jsonb_typeof(rs.steps) = 'array' THEN rs.steps ELSE '[]'::jsonb END) st
WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
  AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
  AND (sqlc.narg('branch')::text IS NULL OR r.branch = sqlc.narg('branch')::text)
  AND (sqlc.narg('environment')::text IS NULL OR r.environment = sqlc.narg('environment')::text)
  AND (sqlc.narg('trigger')::text IS NULL OR r.trigger = sqlc.narg('trigger')::text)
  AND r.status NOT IN ('queued', 'running')
  AND coalesce(r.started_at, r.created_at) >= sqlc.arg('since')::timestamptz AND coalesce(r.started_at, r.created_at) < sqlc.arg('until')::timestamptz
  AND (sqlc.narg('tag')::text IS NULL OR sqlc.narg('tag')::text = ANY(rs.tags))
  AND jsonb_typeof(st->'durationMs') = 'number'
GROUP BY 1, 2 ORDER BY 5 DESC, 1, 2 LIMIT 10;

-- name: StatsDurationRegressions :many
-- The median duration of each identity in [since, until) against [previous_since, since).
WITH d AS (
    SELECT rs.identity, p.slug, max(rs.feature_path) AS feature_path, max(rs.name) AS name, max(rs.example_row) AS example_row,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY rs.duration_ms) FILTER (WHERE coalesce(r.started_at, r.created_at) >= sqlc.arg('since')::timestamptz) AS cur,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY rs.duration_ms) FILTER (WHERE coalesce(r.started_at, r.created_at) < sqlc.arg('since')::timestamptz) AS prev
    FROM runs r JOIN projects p ON p.id = r.project_id JOIN run_scenarios rs ON rs.run_id = r.id
    WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
  AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
  AND (sqlc.narg('branch')::text IS NULL OR r.branch = sqlc.narg('branch')::text)
  AND (sqlc.narg('environment')::text IS NULL OR r.environment = sqlc.narg('environment')::text)
  AND (sqlc.narg('trigger')::text IS NULL OR r.trigger = sqlc.narg('trigger')::text)
  AND r.status NOT IN ('queued', 'running')
      AND coalesce(r.started_at, r.created_at) >= sqlc.arg('previous_since')::timestamptz AND coalesce(r.started_at, r.created_at) < sqlc.arg('until')::timestamptz
      AND (sqlc.narg('tag')::text IS NULL OR sqlc.narg('tag')::text = ANY(rs.tags))
      AND rs.duration_ms IS NOT NULL AND rs.status IN ('passed', 'failed')
    GROUP BY p.slug, rs.identity
)
SELECT identity::text AS identity, slug::text AS project, feature_path::text AS feature_path, name::text AS scenario, coalesce(example_row, -1)::int AS example_row,
       cur::float8 AS p50_ms, prev::float8 AS previous_p50_ms, (cur - prev)::float8 AS delta_ms
FROM d WHERE cur IS NOT NULL AND prev IS NOT NULL AND cur > prev
ORDER BY 8 DESC, 2, 3, 4 LIMIT 10;

-- name: StatsMostFailingSteps :many
SELECT coalesce(stats_failing_step(rs.steps)->>'keyword', '')::text AS keyword, coalesce(stats_failing_step(rs.steps)->>'text', '')::text AS text,
       count(*)::bigint AS count
FROM runs r JOIN projects p ON p.id = r.project_id JOIN run_scenarios rs ON rs.run_id = r.id
WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
  AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
  AND (sqlc.narg('branch')::text IS NULL OR r.branch = sqlc.narg('branch')::text)
  AND (sqlc.narg('environment')::text IS NULL OR r.environment = sqlc.narg('environment')::text)
  AND (sqlc.narg('trigger')::text IS NULL OR r.trigger = sqlc.narg('trigger')::text)
  AND r.status NOT IN ('queued', 'running')
  AND coalesce(r.started_at, r.created_at) >= sqlc.arg('since')::timestamptz AND coalesce(r.started_at, r.created_at) < sqlc.arg('until')::timestamptz
  AND (sqlc.narg('tag')::text IS NULL OR sqlc.narg('tag')::text = ANY(rs.tags))
  AND rs.failure_signature IS NOT NULL AND stats_failing_step(rs.steps) IS NOT NULL
GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2 LIMIT 10;

-- name: StatsFailureClusters :many
-- Failures grouped by normalised signature; new when the signature does not occur in [previous_since, since).
-- y holds one row per signature and scenario identity (failures in the window, before it); the clusters
-- are summed from it, and affected lists up to 10 identities of each of the ≤ 20 clusters returned, most
-- failures first, then project, feature path, name, example row, identity (as StatsFailureClustersRollup).
WITH y AS MATERIALIZED (
    SELECT rs.failure_signature AS signature, p.slug, rs.identity,
           count(*) FILTER (WHERE coalesce(r.started_at, r.created_at) >= sqlc.arg('since')::timestamptz) AS n,
           count(*) FILTER (WHERE coalesce(r.started_at, r.created_at) < sqlc.arg('since')::timestamptz) AS prev_n,
           min(coalesce(r.started_at, r.created_at)) FILTER (WHERE coalesce(r.started_at, r.created_at) >= sqlc.arg('since')::timestamptz) AS first_at,
           max(coalesce(r.started_at, r.created_at)) AS last_at,
           min(rs.feature_path) AS feature_path, min(rs.name) AS name, min(rs.example_row) AS example_row
    FROM runs r JOIN projects p ON p.id = r.project_id JOIN run_scenarios rs ON rs.run_id = r.id
    WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
      AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
      AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
      AND (sqlc.narg('branch')::text IS NULL OR r.branch = sqlc.narg('branch')::text)
      AND (sqlc.narg('environment')::text IS NULL OR r.environment = sqlc.narg('environment')::text)
      AND (sqlc.narg('trigger')::text IS NULL OR r.trigger = sqlc.narg('trigger')::text)
      AND r.status NOT IN ('queued', 'running')
      AND coalesce(r.started_at, r.created_at) >= sqlc.arg('previous_since')::timestamptz AND coalesce(r.started_at, r.created_at) < sqlc.arg('until')::timestamptz
      AND (sqlc.narg('tag')::text IS NULL OR sqlc.narg('tag')::text = ANY(rs.tags))
      AND rs.failure_signature IS NOT NULL
    GROUP BY rs.failure_signature, p.slug, rs.identity
), c AS (
    SELECT signature, sum(n) AS count, count(*) FILTER (WHERE n > 0) AS scenarios, min(first_at) AS first_seen_at, max(last_at) AS last_seen_at,
           (sum(prev_n) = 0) AS is_new,
           min(slug || E'\x1f' || identity || E'\x1f' || feature_path || E'\x1f' || name || E'\x1f' || coalesce(example_row::text, '')) FILTER (WHERE n > 0) AS example
    FROM y GROUP BY signature HAVING sum(n) > 0
    ORDER BY 2 DESC, 1 LIMIT 20
)
SELECT c.signature::text AS signature, c.count::bigint AS count, c.scenarios::bigint AS scenarios, c.first_seen_at::timestamptz AS first_seen_at,
       c.last_seen_at::timestamptz AS last_seen_at, c.is_new::boolean AS is_new, c.example::text AS example,
       coalesce((SELECT array_agg(a.ref ORDER BY a.o) FROM (
           SELECT y.slug || E'\x1f' || y.identity || E'\x1f' || y.feature_path || E'\x1f' || y.name || E'\x1f' || coalesce(y.example_row::text, '') AS ref,
                  row_number() OVER (ORDER BY y.n DESC, y.slug, y.feature_path, y.name, y.example_row, y.identity) AS o
           FROM y WHERE y.signature = c.signature AND y.n > 0
           ORDER BY o LIMIT 10) a), '{}')::text[] AS affected
FROM c ORDER BY 2 DESC, 1;

-- name: StatsNewFailures :many
-- Scenarios that passed in their project's last passed run before until and failed in a later run of
-- the window. Each step is an index look-up: the last passed run per project (runs_stats_idx read
-- backwards), its passed scenarios, the project's later runs of the window and their failures.
WITH green AS MATERIALIZED (
    SELECT p.id AS project_id, p.slug, g.id, g.at
    FROM projects p
    CROSS JOIN LATERAL (
        SELECT r.id, coalesce(r.started_at, r.created_at) AS at FROM runs r
        WHERE r.project_id = p.id AND r.status = 'passed' AND coalesce(r.started_at, r.created_at) < sqlc.arg('until')::timestamptz
        AND (sqlc.narg('branch')::text IS NULL OR r.branch = sqlc.narg('branch')::text)
      AND (sqlc.narg('environment')::text IS NULL OR r.environment = sqlc.narg('environment')::text)
      AND (sqlc.narg('trigger')::text IS NULL OR r.trigger = sqlc.narg('trigger')::text)
        ORDER BY coalesce(r.started_at, r.created_at) DESC, r.id DESC LIMIT 1) g
    WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
      AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
      AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
), passed AS (
    SELECT g.project_id, gs.identity FROM green g JOIN run_scenarios gs ON gs.run_id = g.id WHERE gs.status = 'passed' GROUP BY 1, 2
), later AS MATERIALIZED (
    SELECT r.id, g.project_id, g.slug, g.id AS green_id, r.at
    FROM green g
    CROSS JOIN LATERAL (
        -- each project's runs after its last passed run through runs_stats_idx (OFFSET 0 keeps it a
        -- per-project range scan: joined by hash, the planner read every run of the table)
        SELECT r.id, coalesce(r.started_at, r.created_at) AS at FROM runs r
        WHERE r.project_id = g.project_id
          AND coalesce(r.started_at, r.created_at) >= greatest(g.at, sqlc.arg('since')::timestamptz)
          AND coalesce(r.started_at, r.created_at) < sqlc.arg('until')::timestamptz
          AND (coalesce(r.started_at, r.created_at), r.id) > (g.at, g.id)
          AND r.status NOT IN ('queued', 'running')
          AND (sqlc.narg('branch')::text IS NULL OR r.branch = sqlc.narg('branch')::text)
          AND (sqlc.narg('environment')::text IS NULL OR r.environment = sqlc.narg('environment')::text)
          AND (sqlc.narg('trigger')::text IS NULL OR r.trigger = sqlc.narg('trigger')::text)
        OFFSET 0) r
)
SELECT rs.identity::text AS identity, l.slug::text AS project, max(rs.feature_path)::text AS feature_path, max(rs.name)::text AS scenario,
       coalesce(max(rs.example_row), -1)::int AS example_row, count(*)::bigint AS failures, min(l.at)::timestamptz AS first_failed_at, l.green_id AS last_green_run_id
FROM later l
CROSS JOIN LATERAL (
    -- one run's failures through its run_id index (OFFSET 0 keeps it a per-run look-up)
    SELECT x.identity, x.feature_path, x.name, x.example_row FROM run_scenarios x
    WHERE x.run_id = l.id AND x.failure_signature IS NOT NULL
      AND (sqlc.narg('tag')::text IS NULL OR sqlc.narg('tag')::text = ANY(x.tags))
    OFFSET 0) rs
JOIN passed ps ON ps.project_id = l.project_id AND ps.identity = rs.identity
GROUP BY l.slug, rs.identity, l.green_id ORDER BY 7 DESC, 2, 3, 4 LIMIT 50;

-- name: StatsBecameFlaky :many
-- Identities with at least two outcomes and no flip or retry pass in [previous_since, since), and some in [since, until).
WITH res AS (
    SELECT p.slug, rs.identity, rs.feature_path, rs.name, rs.example_row, coalesce(r.started_at, r.created_at) AS at, r.id AS run_id,
           (coalesce(r.started_at, r.created_at) >= sqlc.arg('since')::timestamptz) AS cur, CASE WHEN rs.status = 'passed' THEN 1 ELSE 0 END AS ok, rs.attempts
    FROM runs r JOIN projects p ON p.id = r.project_id JOIN run_scenarios rs ON rs.run_id = r.id
    WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
  AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
  AND (sqlc.narg('branch')::text IS NULL OR r.branch = sqlc.narg('branch')::text)
  AND (sqlc.narg('environment')::text IS NULL OR r.environment = sqlc.narg('environment')::text)
  AND (sqlc.narg('trigger')::text IS NULL OR r.trigger = sqlc.narg('trigger')::text)
  AND r.status NOT IN ('queued', 'running')
      AND coalesce(r.started_at, r.created_at) >= sqlc.arg('previous_since')::timestamptz AND coalesce(r.started_at, r.created_at) < sqlc.arg('until')::timestamptz
      AND (sqlc.narg('tag')::text IS NULL OR sqlc.narg('tag')::text = ANY(rs.tags))
      AND rs.status IN ('passed', 'failed', 'undefined', 'ambiguous')
), f AS (
    SELECT res.*, ((lag(ok) OVER (PARTITION BY slug, identity, cur ORDER BY at, run_id)) <> ok OR (ok = 1 AND attempts > 1)) AS flaky FROM res
)
SELECT identity::text AS identity, slug::text AS project, max(feature_path)::text AS feature_path, max(name)::text AS scenario,
       coalesce(max(example_row), -1)::int AS example_row
FROM f GROUP BY slug, identity
HAVING count(*) FILTER (WHERE NOT cur) >= 2 AND count(*) FILTER (WHERE NOT cur AND flaky) = 0 AND count(*) FILTER (WHERE cur AND flaky) > 0
ORDER BY 2, 3, 4 LIMIT 50;

-- name: CreateQuarantine :one
INSERT INTO scenario_quarantines (project_id, identity, feature_path, name, example_row, owner, reason, expires_at, release_after, created_by)
VALUES ($1, md5(sqlc.arg('feature_path')::text || E'\x1f' || sqlc.arg('name')::text || E'\x1f' || coalesce(sqlc.narg('example_row')::int::text, '')),
        sqlc.arg('feature_path'), sqlc.arg('name'), sqlc.narg('example_row'), $2, $3, $4, $5, $6)
RETURNING *;

-- name: ListQuarantines :many
-- A page of a project's quarantines, open ones first, newest first, after the cursor (open, created
-- at, id) of the previous page; an expired one is no longer active but stays listed. Read in order
-- from scenario_quarantines_list_idx (000022), which stops at the page.
SELECT * FROM scenario_quarantines
WHERE project_id = sqlc.arg('project_id') AND (sqlc.arg('include_released')::boolean OR released_at IS NULL)
  AND (sqlc.narg('after_at')::timestamptz IS NULL
       OR (released_at IS NULL, created_at, id) < (sqlc.narg('after_open')::boolean, sqlc.narg('after_at')::timestamptz, sqlc.narg('after_id')::uuid))
ORDER BY released_at IS NULL DESC, created_at DESC, id DESC
LIMIT sqlc.arg('row_limit');

-- name: ListActiveQuarantines :many
-- The scenarios of a project's quarantines in force at now, newest first: the list's export.
SELECT feature_path, name FROM scenario_quarantines
WHERE project_id = $1 AND released_at IS NULL AND (expires_at IS NULL OR expires_at > sqlc.arg('now')::timestamptz)
ORDER BY created_at DESC, id DESC;

-- name: ReleaseQuarantine :one
UPDATE scenario_quarantines SET released_at = now(), release_reason = $3
WHERE project_id = $1 AND id = $2 AND released_at IS NULL
RETURNING *;

-- name: ActiveQuarantineIdentities :many
-- The identities of a project's quarantines in force now, for the runner.
SELECT identity FROM scenario_quarantines
WHERE project_id = $1 AND released_at IS NULL AND (expires_at IS NULL OR expires_at > now());

-- The queries below answer over the daily rollup (migration 000012, docs/stats.md "Daily rollup")
-- with the same columns as their counterparts over the results, for windows of whole UTC days
-- [since_day, until_day) (previous_day: the previous window's first day) without branch,
-- environment, trigger or tag filters, in UTC.

-- Percentiles over histograms: the bands of a group are summed (jsonb_each, grouped by band), then
-- the continuous percentile is read at position q·(n − 1) from the bands' cumulative counts, each
-- band's durations at their mean, interpolated between the two neighbours (e, b, q, pq below), as
-- stats_hist_pct does for one histogram.

-- name: StatsTrendRunsRollup :many
WITH d AS (
    SELECT (date_trunc(sqlc.arg('bucket')::text, d.day::timestamp) AT TIME ZONE 'UTC')::timestamptz AS at, d.*
    FROM stats_run_days d JOIN projects p ON p.id = d.project_id
    WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
      AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
      AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
      AND d.day >= sqlc.arg('since_day')::date AND d.day < sqlc.arg('until_day')::date
), e AS (
    SELECT d.at, x.band, sum(x.c)::bigint AS c, sum(x.s)::float8 AS s
    FROM d d, unnest(d.dur_hist) AS x(band, c, s) GROUP BY d.at, x.band
), b AS (
    SELECT e.*, s / c AS v, (sum(c) OVER (PARTITION BY at ORDER BY band) - c)::float8 AS before, (sum(c) OVER (PARTITION BY at))::float8 AS n
    FROM e WHERE c > 0
), q AS (
    SELECT at, max(n) AS n,
           max(v) FILTER (WHERE floor(0.5 * (n - 1)) >= before AND floor(0.5 * (n - 1)) < before + c) AS lo50,
           max(v) FILTER (WHERE ceil(0.5 * (n - 1)) >= before AND ceil(0.5 * (n - 1)) < before + c) AS hi50,
           max(v) FILTER (WHERE floor(0.95 * (n - 1)) >= before AND floor(0.95 * (n - 1)) < before + c) AS lo95,
           max(v) FILTER (WHERE ceil(0.95 * (n - 1)) >= before AND ceil(0.95 * (n - 1)) < before + c) AS hi95
    FROM b GROUP BY at
), pq AS (
    SELECT at, n, lo50 + (0.5 * (n - 1) - floor(0.5 * (n - 1))) * (hi50 - lo50) AS p50,
           lo95 + (0.95 * (n - 1) - floor(0.95 * (n - 1))) * (hi95 - lo95) AS p95
    FROM q
), g AS (
    SELECT at, sum(runs) AS runs, sum(passed) AS passed, sum(failed) AS failed, sum(errored) AS errored, sum(cancelled) AS cancelled,
           sum(timed_out) AS timed_out
    FROM d GROUP BY at
)
SELECT g.at::timestamptz AS at, g.runs::bigint AS runs, g.passed::bigint AS passed, g.failed::bigint AS failed, g.errored::bigint AS errored,
       g.cancelled::bigint AS cancelled, g.timed_out::bigint AS timed_out,
       coalesce(pq.p50, 'NaN')::float8 AS run_p50_ms, coalesce(pq.p95, 'NaN')::float8 AS run_p95_ms
FROM g LEFT JOIN pq ON pq.at = g.at ORDER BY 1;

-- name: StatsTrendScenariosRollup :many
WITH d AS (
    SELECT (date_trunc(sqlc.arg('bucket')::text, d.day::timestamp) AT TIME ZONE 'UTC')::timestamptz AS at, d.s_total AS total, d.s_passed AS passed,
           d.s_failed AS failed, d.s_skipped AS skipped, d.s_pending AS pending, d.s_undefined AS undefined, d.s_flaky AS retry_passes, d.s_hist AS dur_hist
    FROM stats_run_days d JOIN projects p ON p.id = d.project_id
    WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
      AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
      AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
      AND d.day >= sqlc.arg('since_day')::date AND d.day < sqlc.arg('until_day')::date
), e AS (
    SELECT d.at, x.band, sum(x.c)::bigint AS c, sum(x.s)::float8 AS s
    FROM d d, unnest(d.dur_hist) AS x(band, c, s) GROUP BY d.at, x.band
), b AS (
    SELECT e.*, s / c AS v, (sum(c) OVER (PARTITION BY at ORDER BY band) - c)::float8 AS before, (sum(c) OVER (PARTITION BY at))::float8 AS n
    FROM e WHERE c > 0
), q AS (
    SELECT at, max(n) AS n,
           max(v) FILTER (WHERE floor(0.5 * (n - 1)) >= before AND floor(0.5 * (n - 1)) < before + c) AS lo50,
           max(v) FILTER (WHERE ceil(0.5 * (n - 1)) >= before AND ceil(0.5 * (n - 1)) < before + c) AS hi50,
           max(v) FILTER (WHERE floor(0.95 * (n - 1)) >= before AND floor(0.95 * (n - 1)) < before + c) AS lo95,
           max(v) FILTER (WHERE ceil(0.95 * (n - 1)) >= before AND ceil(0.95 * (n - 1)) < before + c) AS hi95
    FROM b GROUP BY at
), pq AS (
    SELECT at, n, lo50 + (0.5 * (n - 1) - floor(0.5 * (n - 1))) * (hi50 - lo50) AS p50,
           lo95 + (0.95 * (n - 1) - floor(0.95 * (n - 1))) * (hi95 - lo95) AS p95
    FROM q
), g AS (
    SELECT at, sum(total) AS total, sum(passed) AS passed, sum(failed) AS failed, sum(skipped) AS skipped, sum(pending) AS pending,
           sum(undefined) AS undefined, sum(retry_passes) AS flaky
    FROM d GROUP BY at
)
SELECT g.at::timestamptz AS at, g.total::bigint AS total, g.passed::bigint AS passed, g.failed::bigint AS failed, g.skipped::bigint AS skipped,
       g.pending::bigint AS pending, g.undefined::bigint AS undefined, g.flaky::bigint AS flaky,
       coalesce(pq.p50, 'NaN')::float8 AS p50_ms, coalesce(pq.p95, 'NaN')::float8 AS p95_ms
FROM g LEFT JOIN pq ON pq.at = g.at ORDER BY 1;

-- name: StatsTrendSummaryRollup :one
WITH rd AS (
    SELECT d.*, 1 AS one FROM stats_run_days d JOIN projects p ON p.id = d.project_id
    WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
      AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
      AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
      AND d.day >= sqlc.arg('since_day')::date AND d.day < sqlc.arg('until_day')::date
), sd AS (
    SELECT d.s_total AS total, d.s_failed AS failed, d.s_undefined AS undefined, d.s_flaky AS retry_passes FROM stats_run_days d JOIN projects p ON p.id = d.project_id
    WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
      AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
      AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
      AND d.day >= sqlc.arg('since_day')::date AND d.day < sqlc.arg('until_day')::date
), e AS (
    SELECT d.one, x.band, sum(x.c)::bigint AS c, sum(x.s)::float8 AS s
    FROM rd d, unnest(d.dur_hist) AS x(band, c, s) GROUP BY d.one, x.band
), b AS (
    SELECT e.*, s / c AS v, (sum(c) OVER (PARTITION BY one ORDER BY band) - c)::float8 AS before, (sum(c) OVER (PARTITION BY one))::float8 AS n
    FROM e WHERE c > 0
), q AS (
    SELECT one, max(n) AS n,
           max(v) FILTER (WHERE floor(0.5 * (n - 1)) >= before AND floor(0.5 * (n - 1)) < before + c) AS lo50,
           max(v) FILTER (WHERE ceil(0.5 * (n - 1)) >= before AND ceil(0.5 * (n - 1)) < before + c) AS hi50,
           max(v) FILTER (WHERE floor(0.95 * (n - 1)) >= before AND floor(0.95 * (n - 1)) < before + c) AS lo95,
           max(v) FILTER (WHERE ceil(0.95 * (n - 1)) >= before AND ceil(0.95 * (n - 1)) < before + c) AS hi95
    FROM b GROUP BY one
), pq AS (
    SELECT one, n, lo50 + (0.5 * (n - 1) - floor(0.5 * (n - 1))) * (hi50 - lo50) AS p50,
           lo95 + (0.95 * (n - 1) - floor(0.95 * (n - 1))) * (hi95 - lo95) AS p95
    FROM q
)
SELECT (SELECT coalesce(sum(runs), 0) FROM rd)::bigint AS runs,
       (SELECT coalesce(sum(passed), 0) FROM rd)::bigint AS passed,
       (SELECT coalesce(sum(runs - cancelled), 0) FROM rd)::bigint AS finished,
       coalesce((SELECT p95 FROM pq), 'NaN')::float8 AS run_p95_ms,
       (SELECT coalesce(sum(total), 0) FROM sd)::bigint AS scenarios,
       (SELECT coalesce(sum(failed + undefined), 0) FROM sd)::bigint AS scenario_failures,
       (SELECT coalesce(sum(retry_passes), 0) FROM sd)::bigint AS flaky;

-- name: StatsDurationsRollup :many
-- The slowest scenarios of [since_day, until_day) and the biggest duration regressions against
-- [previous_day, since_day) in one read of the identity-days: each identity's histogram is summed
-- once per period (kind 'slowest': top 10 by p95 of the window; kind 'regression': top 10 by the
-- rise of p50). Same figures as StatsSlowestScenariosRollup and StatsDurationRegressionsRollup.
-- The bands are read once, straight from the table (a CTE of the identity-days with their histograms
-- would be written to a temporary file); both periods' percentiles come out of one group per identity;
-- counts are summed as float8 (exact below 2^53; a bigint sum is a numeric); the names of the ≤ 20
-- identities listed are read afterwards without the histograms (an identity is the md5 of its
-- feature path, name and example row, so every day of it carries the same names).
WITH e AS (
    SELECT d.project_id, d.identity, d.day >= sqlc.arg('since_day')::date AS cur, x.band, sum(x.c::float8) AS c, sum(x.s) AS s
    FROM stats_scenario_days d JOIN projects p ON p.id = d.project_id, unnest(d.pf_hist) AS x(band, c, s)
    WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
      AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
      AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
      AND d.day >= sqlc.arg('previous_day')::date AND d.day < sqlc.arg('until_day')::date
    GROUP BY 1, 2, 3, 4
), b AS (
    SELECT e.*, s / c AS v, sum(c) OVER w - c AS before, sum(c) OVER (PARTITION BY project_id, identity, cur) AS n
    FROM e WHERE c > 0 WINDOW w AS (PARTITION BY project_id, identity, cur ORDER BY band ROWS UNBOUNDED PRECEDING)
), q AS (
    -- per identity, the bands that hold positions ⌊q·(n − 1)⌋ and ⌈q·(n − 1)⌉ of each period
    SELECT project_id, identity, max(n) FILTER (WHERE cur) AS n, max(n) FILTER (WHERE NOT cur) AS prev_n,
           max(v) FILTER (WHERE cur AND floor(0.5 * (n - 1)) >= before AND floor(0.5 * (n - 1)) < before + c) AS lo50,
           max(v) FILTER (WHERE cur AND ceil(0.5 * (n - 1)) >= before AND ceil(0.5 * (n - 1)) < before + c) AS hi50,
           max(v) FILTER (WHERE cur AND floor(0.95 * (n - 1)) >= before AND floor(0.95 * (n - 1)) < before + c) AS lo95,
           max(v) FILTER (WHERE cur AND ceil(0.95 * (n - 1)) >= before AND ceil(0.95 * (n - 1)) < before + c) AS hi95,
           max(v) FILTER (WHERE NOT cur AND floor(0.5 * (n - 1)) >= before AND floor(0.5 * (n - 1)) < before + c) AS prev_lo50,
           max(v) FILTER (WHERE NOT cur AND ceil(0.5 * (n - 1)) >= before AND ceil(0.5 * (n - 1)) < before + c) AS prev_hi50
    FROM b GROUP BY project_id, identity
), h AS (
    SELECT project_id, identity, n, lo50 + (0.5 * (n - 1) - floor(0.5 * (n - 1))) * (hi50 - lo50) AS cur_p50,
           lo95 + (0.95 * (n - 1) - floor(0.95 * (n - 1))) * (hi95 - lo95) AS cur_p95,
           prev_lo50 + (0.5 * (prev_n - 1) - floor(0.5 * (prev_n - 1))) * (prev_hi50 - prev_lo50) AS prev_p50
    FROM q
), top AS (
    (SELECT 'slowest' AS kind, h.* FROM h WHERE cur_p95 IS NOT NULL ORDER BY cur_p95 DESC LIMIT 40)
    UNION ALL
    (SELECT 'regression', h.* FROM h WHERE cur_p50 > prev_p50 ORDER BY cur_p50 - prev_p50 DESC LIMIT 40)
), names AS (
    SELECT DISTINCT ON (d.project_id, d.identity) d.project_id, d.identity, d.feature_path, d.name, d.example_row
    FROM stats_scenario_days d JOIN (SELECT DISTINCT project_id, identity FROM top) t ON t.project_id = d.project_id AND t.identity = d.identity
    WHERE d.day >= sqlc.arg('previous_day')::date AND d.day < sqlc.arg('until_day')::date
    ORDER BY d.project_id, d.identity, d.day DESC
), named AS (
    SELECT top.kind, top.identity, p.slug, names.feature_path, names.name, names.example_row, top.n, top.cur_p50, top.cur_p95, top.prev_p50
    FROM top JOIN projects p ON p.id = top.project_id JOIN names ON names.project_id = top.project_id AND names.identity = top.identity
), ranked AS (
    SELECT named.*, row_number() OVER (PARTITION BY kind ORDER BY CASE WHEN kind = 'slowest' THEN cur_p95 ELSE cur_p50 - prev_p50 END DESC,
                                                        slug, feature_path, name) AS rank
    FROM named
)
SELECT kind::text AS kind, identity::text AS identity, slug::text AS project, feature_path::text AS feature_path, name::text AS scenario,
       coalesce(example_row, -1)::int AS example_row, n::bigint AS results, cur_p50::float8 AS p50_ms, coalesce(cur_p95, 'NaN')::float8 AS p95_ms,
       coalesce(prev_p50, 'NaN')::float8 AS previous_p50_ms
FROM ranked WHERE rank <= 10 ORDER BY kind, rank;

-- name: StatsSlowestStepsRollup :many
-- Counts are summed as float8 (exact below 2^53; a bigint sum is a numeric), the bands read straight
-- from the table.
WITH e AS (
    SELECT d.keyword, d.text, x.band, sum(x.c::float8) AS c, sum(x.s) AS s
    FROM stats_step_days d JOIN projects p ON p.id = d.project_id, unnest(d.dur_hist) AS x(band, c, s)
    WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
      AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
      AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
      AND d.day >= sqlc.arg('since_day')::date AND d.day < sqlc.arg('until_day')::date
    GROUP BY d.keyword, d.text, x.band
), b AS (
    SELECT e.*, s / c AS v, sum(c) OVER (PARTITION BY keyword, text ORDER BY band ROWS UNBOUNDED PRECEDING) - c AS before,
           sum(c) OVER (PARTITION BY keyword, text) AS n
    FROM e WHERE c > 0
), q AS (
    SELECT keyword, text, max(n) AS n,
           max(v) FILTER (WHERE floor(0.5 * (n - 1)) >= before AND floor(0.5 * (n - 1)) < before + c) AS lo50,
           max(v) FILTER (WHERE ceil(0.5 * (n - 1)) >= before AND ceil(0.5 * (n - 1)) < before + c) AS hi50,
           max(v) FILTER (WHERE floor(0.95 * (n - 1)) >= before AND floor(0.95 * (n - 1)) < before + c) AS lo95,
           max(v) FILTER (WHERE ceil(0.95 * (n - 1)) >= before AND ceil(0.95 * (n - 1)) < before + c) AS hi95
    FROM b GROUP BY keyword, text
), pq AS (
    SELECT keyword, text, n, lo50 + (0.5 * (n - 1) - floor(0.5 * (n - 1))) * (hi50 - lo50) AS p50,
           lo95 + (0.95 * (n - 1) - floor(0.95 * (n - 1))) * (hi95 - lo95) AS p95
    FROM q
)
SELECT keyword::text AS keyword, text::text AS text, n::bigint AS count, p50::float8 AS p50_ms, p95::float8 AS p95_ms
FROM pq ORDER BY 5 DESC, 1, 2 LIMIT 10;

-- name: StatsMostFailingStepsRollup :many
SELECT f.step_keyword::text AS keyword, f.step_text::text AS text, sum(f.count)::bigint AS count
FROM stats_failure_days f JOIN projects p ON p.id = f.project_id
WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
  AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
  AND f.day >= sqlc.arg('since_day')::date AND f.day < sqlc.arg('until_day')::date AND (f.step_keyword <> '' OR f.step_text <> '')
GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2 LIMIT 10;

-- name: StatsFailureClustersRollup :many
-- As StatsFailureClusters over stats_failure_days. Feature path, name and example row of an identity are
-- its last day's in stats_scenario_days, looked up only for the ≤ 20 clusters' candidates for affected
-- (the identities ranked within the first 10 by failures, ties included, before the order by names).
WITH f AS (
    SELECT f.*, p.slug FROM stats_failure_days f JOIN projects p ON p.id = f.project_id
    WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
      AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
      AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
      AND f.day >= sqlc.arg('previous_day')::date AND f.day < sqlc.arg('until_day')::date
), y AS MATERIALIZED (
    SELECT signature, project_id, slug, identity,
           coalesce(sum(count) FILTER (WHERE day >= sqlc.arg('since_day')::date), 0) AS n,
           count(*) FILTER (WHERE day < sqlc.arg('since_day')::date) AS prev_n,
           min(first_at) FILTER (WHERE day >= sqlc.arg('since_day')::date) AS first_at,
           max(last_at) AS last_at
    FROM f GROUP BY signature, project_id, slug, identity
), g AS (
    SELECT signature, sum(n) AS count, count(*) FILTER (WHERE n > 0) AS scenarios, min(first_at) AS first_seen_at, max(last_at) AS last_seen_at,
           (sum(prev_n) = 0) AS is_new,
           min(slug || E'\x1f' || identity) FILTER (WHERE n > 0) AS ex
    FROM y GROUP BY signature
    HAVING sum(n) > 0
    ORDER BY 2 DESC, 1 LIMIT 20
), cand AS (
    SELECT k.* FROM (
        SELECT y.*, rank() OVER (PARTITION BY y.signature ORDER BY y.n DESC) AS r FROM y JOIN g ON g.signature = y.signature WHERE y.n > 0) k
    WHERE k.r <= 10
), named AS (
    SELECT cand.signature, cand.slug, cand.identity, cand.n, n.feature_path, n.name, n.example_row
    FROM cand LEFT JOIN LATERAL (
        SELECT d.feature_path, d.name, d.example_row FROM stats_scenario_days d
        WHERE d.project_id = cand.project_id AND d.identity = cand.identity
          AND d.day >= sqlc.arg('since_day')::date AND d.day < sqlc.arg('until_day')::date
        ORDER BY d.day DESC LIMIT 1) n ON true
)
SELECT g.signature::text AS signature, g.count::bigint AS count, g.scenarios::bigint AS scenarios, g.first_seen_at::timestamptz AS first_seen_at,
       g.last_seen_at::timestamptz AS last_seen_at, g.is_new::boolean AS is_new,
       (g.ex || E'\x1f' || coalesce(n.feature_path, '') || E'\x1f' || coalesce(n.name, '') || E'\x1f' || coalesce(n.example_row::text, ''))::text AS example,
       coalesce((SELECT array_agg(a.ref ORDER BY a.o) FROM (
           SELECT m.slug || E'\x1f' || m.identity || E'\x1f' || coalesce(m.feature_path, '') || E'\x1f' || coalesce(m.name, '') || E'\x1f' || coalesce(m.example_row::text, '') AS ref,
                  row_number() OVER (ORDER BY m.n DESC, m.slug, m.feature_path, m.name, m.example_row, m.identity) AS o
           FROM named m WHERE m.signature = g.signature
           ORDER BY o LIMIT 10) a), '{}')::text[] AS affected
FROM g LEFT JOIN LATERAL (
    SELECT d.feature_path, d.name, d.example_row FROM stats_scenario_days d JOIN projects p ON p.id = d.project_id
    WHERE p.slug = split_part(g.ex, E'\x1f', 1) AND d.identity = split_part(g.ex, E'\x1f', 2)
      AND d.day >= sqlc.arg('since_day')::date AND d.day < sqlc.arg('until_day')::date
    ORDER BY d.day DESC LIMIT 1) n ON true
ORDER BY 2 DESC, 1;

-- name: StatsBecameFlakyRollup :many
-- As StatsBecameFlaky: flips are counted within each window, days joined as in StatsFlakyRollup.
-- The names are read for the identities that qualify only (ordered aggregates per identity cost a
-- sort each; an identity is the md5 of its names, so every day of it carries the same ones).
WITH d AS (
    SELECT s.project_id, s.identity, s.day, s.n, s.flaky_results, s.first_ok, s.first_retry, (s.day >= sqlc.arg('since_day')::date) AS cur,
           lag(s.last_ok) OVER (PARTITION BY s.project_id, s.identity, s.day >= sqlc.arg('since_day')::date ORDER BY s.day) AS prev_last
    FROM stats_scenario_days s JOIN projects p ON p.id = s.project_id
    WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
      AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
      AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
      AND s.day >= sqlc.arg('previous_day')::date AND s.day < sqlc.arg('until_day')::date AND s.n > 0
), j AS (
    SELECT d.*, flaky_results + (prev_last IS NOT NULL AND prev_last <> first_ok AND NOT first_retry)::int AS flaky FROM d
), g AS MATERIALIZED (
    SELECT project_id, identity FROM j GROUP BY project_id, identity
    HAVING coalesce(sum(n) FILTER (WHERE NOT cur), 0) >= 2 AND coalesce(sum(flaky) FILTER (WHERE NOT cur), 0) = 0 AND coalesce(sum(flaky) FILTER (WHERE cur), 0) > 0
), named AS (
    SELECT DISTINCT ON (s.project_id, s.identity) s.identity, p.slug, s.feature_path, s.name, s.example_row
    FROM stats_scenario_days s JOIN g ON g.project_id = s.project_id AND g.identity = s.identity JOIN projects p ON p.id = s.project_id
    WHERE s.day >= sqlc.arg('previous_day')::date AND s.day < sqlc.arg('until_day')::date AND s.n > 0
    ORDER BY s.project_id, s.identity, s.day DESC
)
SELECT identity::text AS identity, slug::text AS project, feature_path::text AS feature_path, name::text AS scenario,
       coalesce(example_row, -1)::int AS example_row
FROM named ORDER BY 2, 3, 4 LIMIT 50;

-- name: StatsHealByStrategyRollup :many
SELECT h.strategy::text AS strategy, sum(h.count)::bigint AS count, (sum(h.score_sum) / sum(h.count))::float8 AS avg_score
FROM stats_heal_days h JOIN projects p ON p.id = h.project_id
WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
  AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
  AND h.day >= sqlc.arg('since_day')::date AND h.day < sqlc.arg('until_day')::date
GROUP BY h.strategy ORDER BY 2 DESC, 1;

-- name: StatsHealBySelectorRollup :many
SELECT p.slug::text AS project, h.old_selector::text AS selector, sum(h.count)::bigint AS count
FROM stats_heal_days h JOIN projects p ON p.id = h.project_id
WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
  AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
  AND h.day >= sqlc.arg('since_day')::date AND h.day < sqlc.arg('until_day')::date
GROUP BY p.slug, h.old_selector ORDER BY 3 DESC, 1, 2 LIMIT 50;

-- name: StatsHealByScenarioRollup :many
WITH g AS (
    SELECT h.project_id, p.slug, h.identity, sum(h.count) AS count
    FROM stats_heal_days h JOIN projects p ON p.id = h.project_id
    WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
      AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
      AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
      AND h.day >= sqlc.arg('since_day')::date AND h.day < sqlc.arg('until_day')::date
    GROUP BY h.project_id, p.slug, h.identity
)
SELECT g.identity::text AS identity, g.slug::text AS project, n.feature_path::text AS feature_path, n.name::text AS scenario,
       coalesce(n.example_row, -1)::int AS example_row, g.count::bigint AS count
FROM g CROSS JOIN LATERAL (
    SELECT d.feature_path, d.name, d.example_row FROM stats_scenario_days d
    WHERE d.project_id = g.project_id AND d.identity = g.identity
      AND d.day >= sqlc.arg('since_day')::date AND d.day < sqlc.arg('until_day')::date
    ORDER BY d.day DESC LIMIT 1) n
ORDER BY 6 DESC, 2, 3, 4 LIMIT 50;

-- name: StatsHealTopRollup :many
SELECT p.slug::text AS project, h.old_selector::text AS old_selector, h.new_selector::text AS new_selector, h.strategy::text AS strategy,
       sum(h.count)::bigint AS count, (sum(h.score_sum) / sum(h.count))::float8 AS avg_score, max(h.last_at)::timestamptz AS last_seen_at
FROM stats_heal_days h JOIN projects p ON p.id = h.project_id
WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (sqlc.narg('workspace')::uuid IS NULL OR p.workspace_id = sqlc.narg('workspace')::uuid)
  AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
  AND h.day >= sqlc.arg('since_day')::date AND h.day < sqlc.arg('until_day')::date
GROUP BY p.slug, h.old_selector, h.new_selector, h.strategy ORDER BY 5 DESC, 1, 2, 3 LIMIT 20;

-- name: StatsRollupDrain :one
-- Applies up to row_limit of a project's pending runs to the daily rollup (schema 000035) in this
-- statement's transaction; the number applied.
SELECT stats_rollup_drain(sqlc.arg('project_id')::uuid, sqlc.arg('row_limit')::int)::int AS applied;

-- name: StatsRollupPendingProjects :many
-- The projects with runs not yet in the rollup.
SELECT DISTINCT project_id FROM stats_rollup_pending ORDER BY 1;

-- name: StatsRollupSettle :one
-- Applies every pending run of the projects a scope covers (StatsVersions' scope) before a read of
-- the rollup, so that a read after a run's finish sees it (stats_rollup_settle, schema 000035).
SELECT stats_rollup_settle(sqlc.arg('all_workspaces')::boolean, sqlc.arg('workspace_ids')::uuid[],
                           sqlc.narg('workspace')::uuid, sqlc.narg('project')::text)::int AS applied;
