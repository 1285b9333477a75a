-- Seeds the statistics benchmark (docs/benchmarks.md, "Statistics endpoints"): into the project
-- "shop" of a migrated sdods database, sdods.bench_runs finished runs spread over the last 30 days
-- (default 100,000), each with sdods.bench_scenarios scenario results (default 50): about 3 % of the
-- results fail with a message that differs only in a UUID, 2 % pass on a retry, 1 in 500 heal a
-- selector. Runs go through the rollup's bulk path: the rollup is rebuilt at the end by one query.
--
--   PGOPTIONS='-c sdods.bench_runs=100000 -c sdods.bench_scenarios=50' psql "$DATABASE_URL" -f scripts/stats-bench-seed.sql

-- Triggers are off during the bulk inserts (session_replication_role = replica; the seed runs as a
-- superuser): the rollup is rebuilt at the end by one query, nothing is quarantined yet, and the
-- rows reference what they are inserted with. Per row, the rollup's and quarantine's triggers
-- would run 5.1 million times for nothing.
SET session_replication_role = replica;

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

SET session_replication_role = DEFAULT;
SELECT stats_rollup_rebuild(id) FROM projects WHERE slug = 'shop';
ANALYZE runs;
ANALYZE run_scenarios;
ANALYZE stats_scenario_days;
ANALYZE stats_failure_days;
ANALYZE stats_run_days;
ANALYZE stats_step_days;

-- Read paths (docs/benchmarks.md, "Read paths at 100,000 runs"). Runs this part alone, on a database
-- seeded by the part above, with:  sed -n '/^-- Read paths/,$p' scripts/stats-bench-seed.sql | psql …
-- Nothing here is added twice (it is skipped when the run labelled bench-2000 exists).
-- * Branches and tags on the seeded runs (60 % main, the rest on 2,000 feature branches, 1 in 7
--   tagged @nightly), and a third of them started by a schedule of the project's 2,000 schedules.
-- * One run of 2,000 scenarios (a run's detail and report), written as the runner does: the run
--   first (running), its scenarios, then the update that finishes it (the rollup's trigger).
-- * 5,000 features, 20,000 agent jobs with a proposal each, 2,000 released quarantines and 20 open,
--   100,000 audit entries.
DO $$
DECLARE
    pid uuid := (SELECT id FROM projects WHERE slug = 'shop');
    big uuid;
BEGIN
    IF EXISTS (SELECT 1 FROM runs WHERE project_id = pid AND label = 'bench-2000') THEN
        RETURN;
    END IF;
    INSERT INTO schedules (project_id, name, cron, timezone, status, created_at)
    SELECT pid, 'nightly ' || i, (i % 60) || ' 2 * * *', 'UTC', CASE WHEN i % 10 = 0 THEN 'paused' ELSE 'active' END,
           now() - interval '60 days' + i * interval '1 minute'
    FROM generate_series(1, 2000) i;
    UPDATE runs r SET branch = CASE WHEN h % 10 < 6 THEN 'main' ELSE 'feature/f-' || (h % 2000) END,
                      tags = CASE WHEN h % 7 = 0 THEN '@nightly' END,
                      trigger = CASE WHEN h % 3 = 0 THEN 'schedule' ELSE r.trigger END,
                      schedule_id = CASE WHEN h % 3 = 0 THEN (SELECT s.id FROM schedules s WHERE s.project_id = pid AND s.name = 'nightly ' || (1 + h % 2000)) END
    FROM (SELECT id, abs(hashtext(id::text)) AS h FROM runs WHERE project_id = pid) x
    WHERE r.id = x.id;

    INSERT INTO runs (project_id, status, trigger, source, label, branch, created_at, started_at)
    VALUES (pid, 'running', 'api', 'execute', 'bench-2000', 'main', now() - interval '1 hour', now() - interval '1 hour')
    RETURNING id INTO big;
    INSERT INTO run_scenarios (run_id, scenario_key, position, module, feature_path, feature_name, name, line, tags, status, error,
                               attempts, started_at, finished_at, duration_ms, steps)
    SELECT big, 'big-' || s, s, 'features/big/m' || (s / 200), 'features/big/m' || (s / 200) || '/f' || (s / 20) || '.feature',
           'Feature ' || (s / 20), 'big scenario ' || s, 3 + (s % 20) * 6, ARRAY['@big', '@m' || (s / 200)],
           CASE WHEN s % 50 = 0 THEN 'failed' ELSE 'passed' END,
           CASE WHEN s % 50 = 0 THEN jsonb_build_object('message', 'expected status 200, got 500', 'stepIndex', 2) END,
           1, now() - interval '1 hour', now() - interval '1 hour' + (100 + s % 900) * interval '1 millisecond', 100 + s % 900,
           jsonb_build_array(
               jsonb_build_object('index', 0, 'keyword', 'Given ', 'text', 'I open "/shop/items/' || s || '"', 'status', 'passed', 'durationMs', 40 + s % 50,
                                  'attachments', '[]'::jsonb, 'heals', '[]'::jsonb),
               jsonb_build_object('index', 1, 'keyword', 'When ', 'text', 'I click "#buy-' || s || '"', 'status', 'passed', 'durationMs', 30 + s % 40,
                                  'attachments', '[]'::jsonb, 'heals', '[]'::jsonb),
               jsonb_build_object('index', 2, 'keyword', 'Then ', 'text', 'the response status is 200',
                                  'status', CASE WHEN s % 50 = 0 THEN 'failed' ELSE 'passed' END, 'durationMs', 2,
                                  'error', CASE WHEN s % 50 = 0 THEN jsonb_build_object('message', 'expected status 200, got 500') END,
                                  'attachments', '[]'::jsonb, 'heals', '[]'::jsonb))
    FROM generate_series(1, 2000) s;
    UPDATE runs SET status = 'failed', finished_at = now() - interval '55 minutes', updated_at = now() - interval '55 minutes',
                    counts = '{"total": 2000, "passed": 1960, "failed": 40}'
    WHERE id = big;
    PERFORM stats_rollup_drain(pid, NULL); -- its statistics, as its job would add them (schema 000035)

    INSERT INTO features (project_id, path, module, content, etag, name, tags, scenario_count, size_bytes, created_at, updated_at)
    SELECT pid, 'features/area' || (i % 50) || '/f' || i || '.feature', 'features/area' || (i % 50),
           'Feature: f' || i || E'\n  Scenario: s\n    When I send a GET request to "/items/' || i || E'"\n', md5(i::text), 'f' || i,
           CASE WHEN i % 5 = 0 THEN ARRAY['@smoke'] ELSE '{}' END, 1, 60, now() - interval '10 days', now() - interval '10 days'
    FROM generate_series(1, 5000) i;

    INSERT INTO agent_jobs (id, project_id, kind, status, max_seconds, actor_kind, actor_name, created_at, updated_at, finished_at)
    SELECT md5('job' || i)::uuid, pid, CASE WHEN i % 4 = 0 THEN 'llm' ELSE 'heal' END,
           CASE WHEN i % 20 = 0 THEN 'failed' WHEN i % 50 = 1 THEN 'cancelled' ELSE 'succeeded' END, 600, 'system', 'auto-heal',
           now() - i * interval '2 minutes', now() - i * interval '2 minutes', now() - i * interval '2 minutes' + interval '30 seconds'
    FROM generate_series(1, 20000) i;
    INSERT INTO proposals (project_id, job_id, kind, status, title, target, evidence, confidence, reason, created_at, updated_at)
    SELECT pid, md5('job' || i)::uuid, CASE WHEN i % 3 = 0 THEN 'quarantine' ELSE 'feature_patch' END,
           CASE WHEN i % 10 = 0 THEN 'pending' WHEN i % 10 = 1 THEN 'rejected' ELSE 'accepted' END,
           'heal #buy-' || (i % 50), jsonb_build_object('path', 'features/f' || (i % 10) || '.feature'), '{}'::jsonb, 0.5 + (i % 50) / 100.0,
           CASE WHEN i % 10 = 1 THEN 'not a real change' END, now() - i * interval '2 minutes', now() - i * interval '2 minutes'
    FROM generate_series(1, 20000) i;

    INSERT INTO scenario_quarantines (project_id, identity, feature_path, name, owner, reason, created_at, released_at, release_reason)
    SELECT pid, md5('features/f' || (i % 10) || '.feature' || E'\x1f' || 'scenario ' || (i % 50) || E'\x1f'), 'features/f' || (i % 10) || '.feature',
           'scenario ' || (i % 50), 'qa', 'flaky in CI', now() - i * interval '1 hour',
           CASE WHEN i > 20 THEN now() - i * interval '1 hour' + interval '30 minutes' END, CASE WHEN i > 20 THEN 'released after 3 clean results' END
    FROM generate_series(1, 2020) i;

    INSERT INTO audit_entries (at, actor_kind, actor_name, operation, method, path, status, outcome, target_kind, target_id)
    SELECT now() - i * interval '30 seconds', 'token', 'ci', CASE WHEN i % 4 = 0 THEN 'createRun' ELSE 'ingestRun' END, 'POST', '/api/runs', 201,
           CASE WHEN i % 100 = 0 THEN 'denied' ELSE 'success' END, 'run', md5(i::text)
    FROM generate_series(1, 100000) i;
END
$$;
-- The 2,000 schedules' cursors (next_fire_at, what the upcoming list starts from): each one's next
-- firing at 02:MM UTC, set again whenever a cursor is in the past. next_due_at stays null, so that
-- the benchmark's server never fires them (it would add runs to the lists it measures).
UPDATE schedules s
SET next_fire_at = CASE WHEN t.today > now() THEN t.today ELSE t.today + interval '1 day' END
FROM (SELECT id, date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' + interval '2 hours'
                 + split_part(cron, ' ', 1)::integer * interval '1 minute' AS today
      FROM schedules WHERE name LIKE 'nightly %' AND cron LIKE '% 2 * * *') t
WHERE s.id = t.id AND s.project_id = (SELECT id FROM projects WHERE slug = 'shop')
  AND s.status = 'active' AND (s.next_fire_at IS NULL OR s.next_fire_at <= now());
ANALYZE runs;
ANALYZE run_scenarios;
ANALYZE schedules;
ANALYZE features;
ANALYZE agent_jobs;
ANALYZE proposals;
ANALYZE scenario_quarantines;
ANALYZE audit_entries;
