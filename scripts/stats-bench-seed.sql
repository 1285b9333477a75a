-- Seeds the statistics benchmark (docs/benchmarks.md, "Statistics endpoints"): into the project
-- "shop" of a migrated sdods database, sdods.bench_runs finished runs spread over the last 30 days
-- (default 100,000), each with sdods.bench_scenarios scenario results (default 50): about 3 % of the
-- results fail with a message that differs only in a UUID, 2 % pass on a retry, 1 in 500 heal a
-- selector. Runs go through the rollup's bulk path: the rollup is rebuilt at the end by one query.
--
--   PGOPTIONS='-c sdods.bench_runs=100000 -c sdods.bench_scenarios=50' psql "$DATABASE_URL" -f scripts/stats-bench-seed.sql

SELECT set_config('sdods.bench_runs_n', coalesce(nullif(current_setting('sdods.bench_runs', true), ''), '100000'), false),
       set_config('sdods.bench_scenarios_n', coalesce(nullif(current_setting('sdods.bench_scenarios', true), ''), '50'), false);

INSERT INTO runs (project_id, status, trigger, source, created_at, started_at, finished_at, counts)
SELECT p.id, CASE WHEN i % 5 = 0 THEN 'failed' ELSE 'passed' END, 'api', 'ingest',
       now() - i * (interval '30 days' / n), now() - i * (interval '30 days' / n),
       now() - i * (interval '30 days' / n) + interval '90 seconds' + (i % 60) * interval '1 second', '{"total": 50, "failed": 1}'
FROM projects p, (SELECT current_setting('sdods.bench_runs_n')::int AS n) c, generate_series(1, c.n) i
WHERE p.slug = 'shop';

INSERT INTO run_scenarios (run_id, scenario_key, position, module, feature_path, name, line, status, error, attempts, duration_ms, steps)
SELECT r.id, 'k' || s, s, 'm', 'features/f' || (s % 10) || '.feature', 'scenario ' || s, s,
       CASE WHEN f THEN 'failed' ELSE 'passed' END,
       CASE WHEN f THEN jsonb_build_object('message', 'order ' || gen_random_uuid() || ' not found') END,
       CASE WHEN NOT f AND h % 50 = 1 THEN 2 ELSE 1 END, 100 + h % 900,
       jsonb_build_array(
           jsonb_build_object('index', 0, 'keyword', 'When ', 'text', 'I click "#buy-' || s || '"', 'status', 'passed', 'durationMs', 50 + h % 400,
                              'heals', CASE WHEN h % 500 = 7 THEN jsonb_build_array(jsonb_build_object('oldSelector', '#buy-' || s,
                                  'newSelector', '[data-testid="buy-' || s || '"]', 'strategy', 'test-id', 'score', 0.9)) ELSE '[]'::jsonb END),
           jsonb_build_object('index', 1, 'keyword', 'Then ', 'text', 'the response status is 200', 'status', CASE WHEN f THEN 'failed' ELSE 'passed' END,
                              'durationMs', 1, 'heals', '[]'::jsonb))
FROM runs r JOIN projects p ON p.id = r.project_id AND p.slug = 'shop',
     generate_series(1, current_setting('sdods.bench_scenarios_n')::int) s,
     LATERAL (SELECT abs(hashtext(r.id::text || s)) AS h) hh,
     LATERAL (SELECT (s % 10 = 0 AND hh.h % 4 = 0) OR hh.h % 100 = 0 AS f) ff;

SELECT stats_rollup_rebuild(id) FROM projects WHERE slug = 'shop';
ANALYZE runs;
ANALYZE run_scenarios;
ANALYZE stats_scenario_days;
ANALYZE stats_failure_days;
ANALYZE stats_run_days;
ANALYZE stats_step_days;
