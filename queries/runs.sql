-- name: CreateRun :one
INSERT INTO runs (project_id, status, trigger, source, label, paths, tags, environment, branch, commit_sha,
                  variables, datasets, process_name, schedule_id, retries, timeout_seconds, created_by)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
RETURNING *;

-- name: NotifyRunEvent :exec
SELECT pg_notify('sdods_run_events', sqlc.arg('payload')::text);

-- name: ClaimQueuedRun :one
-- Starts the run of a River job on this worker, unless it is no longer queued (cancelled before
-- it started, or started already): no row then, and the job has nothing to do.
UPDATE runs SET status = 'running', worker_id = sqlc.arg('worker_id'), started_at = now(), heartbeat_at = now(), updated_at = now()
WHERE id = sqlc.arg('id') AND status = 'queued'
RETURNING *;

-- name: HeartbeatRuns :many
-- Keeps this worker's runs alive and tells it which of them were asked to stop.
UPDATE runs SET heartbeat_at = now()
WHERE status = 'running' AND worker_id = sqlc.arg('worker_id') AND id = ANY(sqlc.arg('ids')::uuid[])
RETURNING id, cancel_requested;

-- name: ReconcileLostRuns :many
-- Runs whose worker stopped heartbeating died with it.
UPDATE runs SET status = 'errored', finished_at = now(), updated_at = now(),
                error = 'the worker executing this run stopped (process exit or crash); run it again'
WHERE status = 'running' AND heartbeat_at < now() - make_interval(secs => sqlc.arg('stale_seconds')::int)
RETURNING id;

-- name: FinishRun :one
UPDATE runs SET status = $2, error = $3, counts = $4, finished_at = now(), updated_at = now()
WHERE id = $1 AND status = 'running'
RETURNING *;

-- name: RequestCancel :one
-- A queued run is cancelled at once; a running one is flagged for its worker.
UPDATE runs SET
    cancel_requested = true,
    status = CASE WHEN status = 'queued' THEN 'cancelled' ELSE status END,
    finished_at = CASE WHEN status = 'queued' THEN now() ELSE finished_at END,
    updated_at = now()
WHERE id = $1
RETURNING *;

-- name: GetRun :one
SELECT sqlc.embed(r), p.slug AS project_slug, p.workspace_id
FROM runs r JOIN projects p ON p.id = r.project_id
WHERE r.id = $1;

-- name: ListRuns :many
-- The columns of a run's summary only: not its variables, datasets, error or worker state, which
-- the list does not show and which cost a third of the request's decoding (issue 31 item 3).
SELECT r.id, r.project_id, r.status, r.trigger, r.source, r.label, r.paths, r.tags, r.environment, r.branch,
       r.commit_sha, r.process_name, r.schedule_id, r.created_at, r.updated_at, r.started_at, r.finished_at,
       r.counts, p.slug AS project_slug
FROM runs r JOIN projects p ON p.id = r.project_id
WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
  -- The project's id as a value (an InitPlan), not only through the join: the planner then reads
  -- the project's runs in the order of runs_project_idx and stops at the page, instead of joining
  -- all runs of the status to projects and sorting them (issue 31 item 3).
  AND (sqlc.narg('project')::text IS NULL OR r.project_id = (SELECT pp.id FROM projects pp WHERE pp.slug = sqlc.narg('project')::text))
  -- One status or branch is compared with "=", not "= ANY": the custom plan's constant folding
  -- leaves "r.status = 'failed'", which runs_project_status_idx answers in the list's order (the
  -- page's rows and no more), where "= ANY" read the project's runs newest first and filtered
  -- them (read paths round 8).
  AND (cardinality(sqlc.arg('statuses')::text[]) = 0
       OR (cardinality(sqlc.arg('statuses')::text[]) = 1 AND r.status = (sqlc.arg('statuses')::text[])[1])
       OR (cardinality(sqlc.arg('statuses')::text[]) > 1 AND r.status = ANY(sqlc.arg('statuses')::text[])))
  AND (cardinality(sqlc.arg('branches')::text[]) = 0
       OR (cardinality(sqlc.arg('branches')::text[]) = 1 AND r.branch = (sqlc.arg('branches')::text[])[1])
       OR (cardinality(sqlc.arg('branches')::text[]) > 1 AND r.branch = ANY(sqlc.arg('branches')::text[])))
  AND (cardinality(sqlc.arg('not_branches')::text[]) = 0 OR r.branch IS NULL OR r.branch <> ALL(sqlc.arg('not_branches')::text[]))
  AND (cardinality(sqlc.arg('triggers')::text[]) = 0 OR r.trigger = ANY(sqlc.arg('triggers')::text[]))
  AND (cardinality(sqlc.arg('not_triggers')::text[]) = 0 OR r.trigger <> ALL(sqlc.arg('not_triggers')::text[]))
  AND (sqlc.narg('schedule_id')::uuid IS NULL OR r.schedule_id = sqlc.narg('schedule_id')::uuid)
  -- Tags match as substrings of the run's tag expression (the patterns are escaped by the service).
  AND (cardinality(sqlc.arg('tag_patterns')::text[]) = 0 OR r.tags ILIKE ANY(sqlc.arg('tag_patterns')::text[]))
  AND (cardinality(sqlc.arg('not_tag_patterns')::text[]) = 0 OR r.tags IS NULL OR NOT (r.tags ILIKE ANY(sqlc.arg('not_tag_patterns')::text[])))
  AND (sqlc.narg('since')::timestamptz IS NULL OR r.created_at >= sqlc.narg('since')::timestamptz)
  AND (sqlc.narg('until')::timestamptz IS NULL OR r.created_at < sqlc.narg('until')::timestamptz)
  AND (sqlc.narg('before_at')::timestamptz IS NULL
       OR (r.created_at, r.id) < (sqlc.narg('before_at')::timestamptz, sqlc.narg('before_id')::uuid))
ORDER BY r.created_at DESC, r.id DESC
LIMIT sqlc.arg('row_limit');

-- name: ListProjectRuns :many
-- ListRuns for one project and no other filter (its columns, order and answer), written without
-- the optional filters so that one generic plan serves every value. runs.(*Service).List sends it
-- and the three below planned once per connection (store.QueryGeneric): planning ListRuns for every
-- request cost PostgreSQL about as much as running it (docs/benchmarks.md, read paths round 10).
-- Without a cursor the bound is (infinity, the largest uuid), which no row has: ids are random
-- (version 4) uuids.
-- The project is matched with "= ANY(ARRAY[…])" and leads the order (the status and branch
-- statements below have "=", which picks their indexes): with "=", the planner, which cannot know
-- the project, reads runs_created_idx and filters the project's runs out of everyone's — ListRuns'
-- custom plan does the same —, which for a project with fewer runs than a page next to a large
-- history reads every run (25 ms for 10 of 200,000 runs). The array's one element still bounds
-- runs_project_idx, whose order (the project, then created_at, id descending) only that index
-- gives without a sort: it is read from the cursor and stopped at the page, for any project (on a
-- small database the planner may rather read the project's runs and sort them: still only its own).
SELECT r.id, r.project_id, r.status, r.trigger, r.source, r.label, r.paths, r.tags, r.environment, r.branch,
       r.commit_sha, r.process_name, r.schedule_id, r.created_at, r.updated_at, r.started_at, r.finished_at,
       r.counts, p.slug AS project_slug
FROM runs r JOIN projects p ON p.id = r.project_id
WHERE r.project_id = ANY(ARRAY[(SELECT pp.id FROM projects pp WHERE pp.slug = sqlc.arg('project')::text)])
  AND (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (r.created_at, r.id) < (coalesce(sqlc.narg('before_at')::timestamptz, 'infinity'),
                              coalesce(sqlc.narg('before_id')::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
ORDER BY r.project_id, r.created_at DESC, r.id DESC
LIMIT sqlc.arg('row_limit');

-- name: ListProjectRunsByStatus :many
-- ListProjectRuns of one status: runs_project_status_idx read in order from the cursor (the
-- project and the status leading the index, the planner picks it with "=").
SELECT r.id, r.project_id, r.status, r.trigger, r.source, r.label, r.paths, r.tags, r.environment, r.branch,
       r.commit_sha, r.process_name, r.schedule_id, r.created_at, r.updated_at, r.started_at, r.finished_at,
       r.counts, p.slug AS project_slug
FROM runs r JOIN projects p ON p.id = r.project_id
WHERE r.project_id = (SELECT pp.id FROM projects pp WHERE pp.slug = sqlc.arg('project')::text)
  AND r.status = sqlc.arg('status')::text
  AND (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (r.created_at, r.id) < (coalesce(sqlc.narg('before_at')::timestamptz, 'infinity'),
                              coalesce(sqlc.narg('before_id')::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
ORDER BY r.created_at DESC, r.id DESC
LIMIT sqlc.arg('row_limit');

-- name: ListProjectRunsByBranch :many
-- ListProjectRuns of one branch: runs_project_branch_idx read in order from the cursor.
SELECT r.id, r.project_id, r.status, r.trigger, r.source, r.label, r.paths, r.tags, r.environment, r.branch,
       r.commit_sha, r.process_name, r.schedule_id, r.created_at, r.updated_at, r.started_at, r.finished_at,
       r.counts, p.slug AS project_slug
FROM runs r JOIN projects p ON p.id = r.project_id
WHERE r.project_id = (SELECT pp.id FROM projects pp WHERE pp.slug = sqlc.arg('project')::text)
  AND r.branch = sqlc.arg('branch')::text
  AND (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (r.created_at, r.id) < (coalesce(sqlc.narg('before_at')::timestamptz, 'infinity'),
                              coalesce(sqlc.narg('before_id')::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
ORDER BY r.created_at DESC, r.id DESC
LIMIT sqlc.arg('row_limit');

-- name: ListProjectRunsByTags :many
-- ListProjectRuns whose tags match one of the patterns (escaped by the service, as ListRuns's),
-- bounded by the page for a common tag and for a rare or absent one alike (read paths round 11):
-- * found: the project's runs read from runs_project_idx as ListProjectRuns reads them, from the
--   cursor, at most walk_limit of them, those that match kept to the page. A common tag fills the
--   page within a few hundred runs (1 in 7 runs: 400 for 51).
-- * sparse: the page is not full and the walk stopped at walk_limit runs, not at the project's
--   end (counted again from runs_project_idx, only when the page is not full: counting in the
--   walk, a window function, cost the common tag's page a third more CPU): the tag is rarer
--   than row_limit in walk_limit, and its runs come instead from
--   runs_project_tags_idx (the project as text and the pattern's trigrams, 000036), sorted: a few
--   thousand at most at 100,000 runs, none for a tag no run has. Walking on would read every run
--   of the project for an absent tag (51 ms at 100,000 runs).
-- Only one of the two branches returns rows (one-time filters: the other is not executed). The
-- project's visibility is checked on the project, which is the same as checking its runs. The
-- bitmap branch's subquery (OFFSET 0: planned alone, the cursor and the order outside it) reads
-- the index rather than walking runs_project_idx or runs_created_idx for the cursor and the order.
WITH found AS MATERIALIZED (
    SELECT w.id, w.project_id, w.status, w.trigger, w.source, w.label, w.paths, w.tags, w.environment, w.branch,
           w.commit_sha, w.process_name, w.schedule_id, w.created_at, w.updated_at, w.started_at, w.finished_at, w.counts
    FROM (SELECT r.id, r.project_id, r.status, r.trigger, r.source, r.label, r.paths, r.tags, r.environment, r.branch,
                 r.commit_sha, r.process_name, r.schedule_id, r.created_at, r.updated_at, r.started_at, r.finished_at, r.counts,
                 coalesce(r.tags ILIKE ANY(sqlc.arg('tag_patterns')::text[]), false) AS hit
          FROM runs r
          WHERE r.project_id = ANY(ARRAY[(SELECT pp.id FROM projects pp WHERE pp.slug = sqlc.arg('project')::text
                                            AND (sqlc.arg('all_workspaces')::boolean OR pp.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[])))])
            AND (r.created_at, r.id) < (coalesce(sqlc.narg('before_at')::timestamptz, 'infinity'),
                                        coalesce(sqlc.narg('before_id')::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
          ORDER BY r.project_id, r.created_at DESC, r.id DESC
          LIMIT sqlc.arg('walk_limit')::int) w
    WHERE w.hit
    LIMIT sqlc.arg('row_limit')::int
), sparse AS MATERIALIZED (
    SELECT (SELECT count(*) FROM found) < sqlc.arg('row_limit')::int
       AND (SELECT count(*) FROM (
              SELECT 1 FROM runs r
              WHERE r.project_id = ANY(ARRAY[(SELECT pp.id FROM projects pp WHERE pp.slug = sqlc.arg('project')::text
                                                AND (sqlc.arg('all_workspaces')::boolean OR pp.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[])))])
                AND (r.created_at, r.id) < (coalesce(sqlc.narg('before_at')::timestamptz, 'infinity'),
                                            coalesce(sqlc.narg('before_id')::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
              ORDER BY r.project_id, r.created_at DESC, r.id DESC
              LIMIT sqlc.arg('walk_limit')::int) x) = sqlc.arg('walk_limit')::int AS yes
)
SELECT u.id, u.project_id, u.status, u.trigger, u.source, u.label, u.paths, u.tags, u.environment, u.branch,
       u.commit_sha, u.process_name, u.schedule_id, u.created_at, u.updated_at, u.started_at, u.finished_at,
       u.counts, u.project_slug
FROM (
    SELECT f.id, f.project_id, f.status, f.trigger, f.source, f.label, f.paths, f.tags, f.environment, f.branch,
           f.commit_sha, f.process_name, f.schedule_id, f.created_at, f.updated_at, f.started_at, f.finished_at,
           f.counts, sqlc.arg('project')::text AS project_slug
    FROM found f
    WHERE NOT (SELECT s.yes FROM sparse s)
    UNION ALL
    (SELECT m.id, m.project_id, m.status, m.trigger, m.source, m.label, m.paths, m.tags, m.environment, m.branch,
            m.commit_sha, m.process_name, m.schedule_id, m.created_at, m.updated_at, m.started_at, m.finished_at,
            m.counts, sqlc.arg('project')::text AS project_slug
     FROM (SELECT r.id, r.project_id, r.status, r.trigger, r.source, r.label, r.paths, r.tags, r.environment, r.branch,
                  r.commit_sha, r.process_name, r.schedule_id, r.created_at, r.updated_at, r.started_at, r.finished_at, r.counts
           FROM runs r
           WHERE r.project_id::text = (SELECT pp.id::text FROM projects pp WHERE pp.slug = sqlc.arg('project')::text
                                         AND (sqlc.arg('all_workspaces')::boolean OR pp.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[])))
             AND r.tags ILIKE ANY(sqlc.arg('tag_patterns')::text[])
             AND (SELECT s.yes FROM sparse s)
           OFFSET 0) m
     WHERE (m.created_at, m.id) < (coalesce(sqlc.narg('before_at')::timestamptz, 'infinity'),
                                   coalesce(sqlc.narg('before_id')::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
     ORDER BY m.created_at DESC, m.id DESC
     LIMIT sqlc.arg('row_limit')::int)
) u
ORDER BY u.created_at DESC, u.id DESC
LIMIT sqlc.arg('row_limit')::int;

-- name: UserWorkspaceIDs :many
-- The workspaces a user holds a role in, explicitly or as an organisation admin.
SELECT w.id FROM workspaces w
WHERE EXISTS (SELECT 1 FROM workspace_members m WHERE m.workspace_id = w.id AND m.user_id = $1)
   OR EXISTS (SELECT 1 FROM org_members o WHERE o.org_id = w.org_id AND o.user_id = $1 AND o.role = 'admin');

-- name: ListRunEvents :many
-- A run's first row_limit events after seq, in order (schema 000030). A batch holds one event at
-- least, so they are in the first row_limit batches after seq (by their key), and, sequence numbers
-- having no gaps, in those that hold one of the row_limit numbers from the first after seq: only
-- those are unpacked. That first number is the next batch's first when it is later, so that a gap,
-- if one existed, would not end a reader's pages.
SELECT b.run_id, (b.first_seq + e.n - 1)::bigint AS seq, e.at::timestamptz AS at, e.type::text AS type, e.data::json AS data
FROM (SELECT * FROM run_event_batches WHERE run_id = sqlc.arg('run_id')::uuid AND last_seq > sqlc.arg('seq')::bigint
      ORDER BY last_seq LIMIT sqlc.arg('row_limit')::int) b
CROSS JOIN LATERAL ROWS FROM (unnest(b.ats), unnest(b.types), unnest(b.datas)) WITH ORDINALITY AS e(at, type, data, n)
WHERE b.first_seq < greatest(sqlc.arg('seq')::bigint + 1,
                             (SELECT f.first_seq FROM run_event_batches f WHERE f.run_id = sqlc.arg('run_id')::uuid AND f.last_seq > sqlc.arg('seq')::bigint
                              ORDER BY f.last_seq LIMIT 1)) + sqlc.arg('row_limit')::int
  AND b.first_seq + e.n - 1 > sqlc.arg('seq')::bigint
ORDER BY b.last_seq, e.n LIMIT sqlc.arg('row_limit')::int;

-- name: InsertRunScenarios :exec
-- A run's scenarios in one statement: tags as a JSON array each, no example row as 0, no dataset as ''.
INSERT INTO run_scenarios (id, run_id, scenario_key, position, module, feature_path, feature_name, name, line, tags, example_row, dataset, status)
SELECT u.id, sqlc.arg('run_id')::uuid, u.key, u.position, u.module, u.feature_path, u.feature_name, u.name, u.line,
       ARRAY(SELECT jsonb_array_elements_text(u.tags::jsonb)), NULLIF(u.example_row, 0), NULLIF(u.dataset, ''), 'unknown'
FROM (SELECT unnest(sqlc.arg('ids')::uuid[]) AS id, unnest(sqlc.arg('keys')::text[]) AS key,
             unnest(sqlc.arg('positions')::int[]) AS position, unnest(sqlc.arg('modules')::text[]) AS module,
             unnest(sqlc.arg('feature_paths')::text[]) AS feature_path, unnest(sqlc.arg('feature_names')::text[]) AS feature_name,
             unnest(sqlc.arg('names')::text[]) AS name, unnest(sqlc.arg('lines')::int[]) AS line,
             unnest(sqlc.arg('tags')::text[]) AS tags, unnest(sqlc.arg('example_rows')::int[]) AS example_row,
             unnest(sqlc.arg('datasets')::text[]) AS dataset) u
-- Evaluated once, before the rows' foreign-key checks (run at the statement's end): their cached plan
-- reused instead of planned again per row under the pool's force_custom_plan (WriteRunBatch).
WHERE (SELECT set_config('plan_cache_mode', 'auto', true)) IS NOT NULL
ON CONFLICT (run_id, scenario_key) DO NOTHING;

-- The statements of the one scenario writer (impl/server/scenariowrite): nothing else writes a
-- scenario's start, progress or result.

-- name: UpsertRunScenarios :exec
-- Results by key, in one statement (keys distinct): rows is a JSON array of {id?, key, position,
-- module, featurePath, featureName, name, line, tags, exampleRow, status, error, attempts,
-- durationMs, finishedAt, steps}. A key the run has already keeps its row's id and position.
INSERT INTO run_scenarios (id, run_id, scenario_key, position, module, feature_path, feature_name, name, line, tags, example_row,
                           status, error, attempts, duration_ms, finished_at, steps)
SELECT coalesce(u.id, gen_random_uuid()), sqlc.arg('run_id')::uuid, u.key, u.position, u.module, u."featurePath", u."featureName", u.name, u.line,
       coalesce(u.tags, '{}'), u."exampleRow", u.status, u.error, u.attempts, u."durationMs", u."finishedAt", coalesce(u.steps, '[]')
FROM jsonb_to_recordset(sqlc.arg('rows')::jsonb)
     AS u(id uuid, key text, position int, module text, "featurePath" text, "featureName" text, name text, line int, tags text[],
          "exampleRow" int, status text, error jsonb, attempts int, "durationMs" bigint, "finishedAt" timestamptz, steps jsonb)
ON CONFLICT (run_id, scenario_key) DO UPDATE SET
    module = EXCLUDED.module, feature_path = EXCLUDED.feature_path, feature_name = EXCLUDED.feature_name,
    name = EXCLUDED.name, line = EXCLUDED.line, tags = EXCLUDED.tags, example_row = EXCLUDED.example_row,
    status = EXCLUDED.status, error = EXCLUDED.error, attempts = EXCLUDED.attempts, started_at = NULL,
    finished_at = EXCLUDED.finished_at, duration_ms = EXCLUDED.duration_ms, steps = EXCLUDED.steps;

-- name: InterruptRunScenarios :exec
-- The scenarios a lost worker was executing: their steps so far stay, the error says why they
-- have no result.
UPDATE run_scenarios SET error = sqlc.arg('error')::jsonb, finished_at = now()
WHERE run_id = $1 AND started_at IS NOT NULL AND finished_at IS NULL;

-- name: SetRunCounts :exec
UPDATE runs SET counts = $2 WHERE id = $1;

-- name: ListRunScenarios :many
SELECT * FROM run_scenarios WHERE run_id = $1 ORDER BY position;

-- A run's scenario tree is read by impl/server/runs (tree.go) from binary rows, not through gen/db.

-- name: RunReportSummary :one
-- What a run's report counts, computed over its scenarios by the database (reports.Add in SQL):
-- the counts by status, the sum of the durations, and the slowest scenarios' ids, slowest first
-- (ties in run order).
SELECT count(*)::integer AS total,
       count(*) FILTER (WHERE status = 'passed')::integer AS passed,
       count(*) FILTER (WHERE status = 'passed' AND attempts > 1)::integer AS flaky,
       count(*) FILTER (WHERE status IN ('failed', 'ambiguous'))::integer AS failed,
       count(*) FILTER (WHERE status = 'pending')::integer AS pending,
       count(*) FILTER (WHERE status = 'skipped')::integer AS skipped,
       count(*) FILTER (WHERE status = 'undefined')::integer AS undefined,
       coalesce(sum(duration_ms), 0)::bigint AS duration_ms,
       ARRAY(SELECT s.id FROM run_scenarios s WHERE s.run_id = sqlc.arg('run_id') AND s.duration_ms IS NOT NULL
             ORDER BY s.duration_ms DESC, s.position LIMIT sqlc.arg('slowest')::integer)::uuid[] AS slowest
FROM run_scenarios WHERE run_id = sqlc.arg('run_id');

-- name: ListRunReportScenarios :many
-- The scenarios a run's report lists, in run order: the failed ones with their steps and error
-- (the report reads their failing step), the flaky ones (passed after a retry) and the slowest.
SELECT id, module, feature_path, feature_name, name, line, tags, status, attempts, duration_ms,
       (CASE WHEN status IN ('failed', 'ambiguous', 'undefined') THEN error END)::jsonb AS error,
       (CASE WHEN status IN ('failed', 'ambiguous', 'undefined') THEN steps END)::jsonb AS steps
FROM run_scenarios
WHERE run_id = $1
  AND (status IN ('failed', 'ambiguous', 'undefined') OR (status = 'passed' AND attempts > 1) OR id = ANY(sqlc.arg('slowest')::uuid[]))
ORDER BY position;

-- name: GetRunScenario :one
SELECT * FROM run_scenarios WHERE run_id = $1 AND id = $2;

-- name: CreateArtifact :one
INSERT INTO artifacts (run_id, project_id, scenario_key, step_index, name, kind, media_type, size_bytes, sha256, blob_key)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
RETURNING *;

-- name: ListRunArtifacts :many
SELECT * FROM artifacts WHERE run_id = $1 ORDER BY created_at, id;

-- name: GetLocatorAlternatives :one
SELECT alternatives FROM locator_alternatives WHERE project_id = $1 AND selector = $2;

-- name: SaveLocatorAlternatives :exec
INSERT INTO locator_alternatives (project_id, selector, alternatives) VALUES ($1, $2, $3)
ON CONFLICT (project_id, selector) DO UPDATE SET alternatives = EXCLUDED.alternatives, updated_at = now();

-- name: QueuedRunIDs :many
-- The runs waiting for a worker, for giving a River job to those queued before runs were River jobs.
SELECT id FROM runs WHERE status = 'queued' AND source = 'execute' ORDER BY created_at, id;

-- name: WriteRunBatch :exec
-- One batch of a run's sink (impl/server/runs/batch.go) in one statement: the scenarios' progress
-- (a start and the steps so far of a scenario still running), the scenarios' results, the events
-- with the run's last sequence number, their attachments' artifact rows (with the content of those
-- kept in the database), and one notification when the batch has events. Each
-- scenario is in one of the two lists, never both (an UPDATE may change a row once). A batch
-- commits without waiting for its WAL flush when async (docs/runs.md): the setting is read when the
-- statement's transaction commits.
WITH progress AS (
  UPDATE run_scenarios s
  SET started_at = CASE WHEN u.started THEN u.started_at ELSE s.started_at END,
      steps = CASE WHEN u.steps <> '' AND s.finished_at IS NULL THEN u.steps::jsonb ELSE s.steps END
  FROM (SELECT unnest(sqlc.arg('progress_ids')::uuid[]) AS id, unnest(sqlc.arg('progress_started')::bool[]) AS started,
               unnest(sqlc.arg('progress_started_ats')::timestamptz[]) AS started_at,
               unnest(sqlc.arg('progress_steps')::text[]) AS steps) u
  -- The ids' array as well as the join: the planner takes the unnest for one row and would otherwise
  -- walk the run's every scenario row, for none in most batches.
  WHERE s.run_id = sqlc.arg('run_id')::uuid AND s.id = ANY(sqlc.arg('progress_ids')::uuid[]) AND s.id = u.id
), finished AS (
  UPDATE run_scenarios s
  SET started_at = CASE WHEN u.started THEN u.started_at ELSE s.started_at END,
      status = u.status, error = NULLIF(u.error, '')::jsonb, finished_at = u.finished_at, duration_ms = u.duration_ms,
      steps = u.steps::jsonb, attempts = u.attempts
  FROM (SELECT unnest(sqlc.arg('finish_ids')::uuid[]) AS id, unnest(sqlc.arg('finish_started')::bool[]) AS started,
               unnest(sqlc.arg('finish_started_ats')::timestamptz[]) AS started_at, unnest(sqlc.arg('statuses')::text[]) AS status,
               unnest(sqlc.arg('errors')::text[]) AS error, unnest(sqlc.arg('finished_ats')::timestamptz[]) AS finished_at,
               unnest(sqlc.arg('durations_ms')::bigint[]) AS duration_ms, unnest(sqlc.arg('finish_steps')::text[]) AS steps,
               unnest(sqlc.arg('attempts')::int[]) AS attempts) u
  WHERE s.run_id = sqlc.arg('run_id')::uuid AND s.id = u.id
), upd AS (
  UPDATE runs SET last_seq = sqlc.arg('last_seq')::bigint WHERE id = sqlc.arg('run_id')::uuid AND last_seq < sqlc.arg('last_seq')::bigint
  RETURNING id
), ins AS (
  -- Only with the run's row updated (run_events has no foreign key: schema 000021), so never for
  -- a run that is gone, and a delete of the run waits for this batch's commit.
  -- One row for the batch's events (schema 000030): their sequence numbers are consecutive, from the
  -- first to the last (the table's check counts them).
  INSERT INTO run_event_batches (run_id, last_seq, first_seq, ats, types, datas)
  SELECT sqlc.arg('run_id')::uuid, (sqlc.arg('seqs')::bigint[])[cardinality(sqlc.arg('seqs')::bigint[])], (sqlc.arg('seqs')::bigint[])[1],
         sqlc.arg('ats')::timestamptz[], sqlc.arg('types')::text[], sqlc.arg('datas')::text[]::json[]
  WHERE cardinality(sqlc.arg('seqs')::bigint[]) > 0 AND EXISTS (SELECT 1 FROM upd)
), arts AS (
  -- The attachments of the batch's events, their blobs already stored; created_at is when each was
  -- attached, so that a run's artifacts keep their order.
  INSERT INTO artifacts (id, run_id, project_id, scenario_key, step_index, name, kind, media_type, size_bytes, sha256, blob_key, created_at)
  SELECT a.id, sqlc.arg('run_id')::uuid, sqlc.arg('project_id')::uuid, NULLIF(a.scenario_key, ''), NULLIF(a.step_index, -1),
         a.name, a.kind, a.media_type, a.size_bytes, a.sha256, a.blob_key, a.created_at
  FROM (SELECT unnest(sqlc.arg('art_ids')::uuid[]) AS id, unnest(sqlc.arg('art_scenario_keys')::text[]) AS scenario_key,
               unnest(sqlc.arg('art_step_indexes')::int[]) AS step_index, unnest(sqlc.arg('art_names')::text[]) AS name,
               unnest(sqlc.arg('art_kinds')::text[]) AS kind, unnest(sqlc.arg('art_media_types')::text[]) AS media_type,
               unnest(sqlc.arg('art_sizes')::bigint[]) AS size_bytes, unnest(sqlc.arg('art_sha256s')::text[]) AS sha256,
               unnest(sqlc.arg('art_blob_keys')::text[]) AS blob_key, unnest(sqlc.arg('art_created_ats')::timestamptz[]) AS created_at) a
), contents AS (
  -- The content of the attachments kept in the database (blob_key ''), with their rows.
  INSERT INTO artifact_contents (artifact_id, content)
  SELECT unnest(sqlc.arg('content_ids')::uuid[]), unnest(sqlc.arg('contents')::bytea[])
), blob_locks AS (
  -- Each blob key's lock (LockBlob) held until the batch commits: the blob cleanup either sees
  -- the new rows or has deleted the blob before them (the writer then stores it again).
  SELECT pg_advisory_xact_lock(hashtextextended('blob:' || k, 0)) FROM unnest(sqlc.arg('art_blob_keys')::text[]) k WHERE k <> ''
)
SELECT set_config('synchronous_commit', CASE WHEN sqlc.arg('async')::bool THEN 'off' ELSE current_setting('synchronous_commit') END, true),
       -- The foreign keys' checks and the quarantine triggers run at the statement's end, after this:
       -- their cached plans reused (the pool's force_custom_plan replans each check, per row), for the
       -- rest of the transaction (impl/server/store, scenariowrite.Copy).
       set_config('plan_cache_mode', 'auto', true),
       (SELECT pg_notify('sdods_run_events', sqlc.arg('payload')::text) WHERE cardinality(sqlc.arg('seqs')::bigint[]) > 0) IS NULL,
       (SELECT count(*) FROM blob_locks);

-- name: WriteRunEvents :exec
-- A batch of events alone, with no scenario row, result or attachment (the run's end event, written
-- in its final transaction after its status): WriteRunBatch's events, last sequence number,
-- notification and settings, without the CTEs that statement would plan and run for nothing.
WITH upd AS (
  UPDATE runs SET last_seq = sqlc.arg('last_seq')::bigint WHERE id = sqlc.arg('run_id')::uuid AND last_seq < sqlc.arg('last_seq')::bigint
  RETURNING id
), ins AS (
  INSERT INTO run_event_batches (run_id, last_seq, first_seq, ats, types, datas)
  SELECT sqlc.arg('run_id')::uuid, (sqlc.arg('seqs')::bigint[])[cardinality(sqlc.arg('seqs')::bigint[])], (sqlc.arg('seqs')::bigint[])[1],
         sqlc.arg('ats')::timestamptz[], sqlc.arg('types')::text[], sqlc.arg('datas')::text[]::json[]
  WHERE cardinality(sqlc.arg('seqs')::bigint[]) > 0 AND EXISTS (SELECT 1 FROM upd)
)
SELECT set_config('synchronous_commit', CASE WHEN sqlc.arg('async')::bool THEN 'off' ELSE current_setting('synchronous_commit') END, true),
       set_config('plan_cache_mode', 'auto', true),
       (SELECT pg_notify('sdods_run_events', sqlc.arg('payload')::text) WHERE cardinality(sqlc.arg('seqs')::bigint[]) > 0) IS NULL;

-- name: ArtifactContent :one
-- The content of an artifact kept in the database (its blob_key is empty).
SELECT content FROM artifact_contents WHERE artifact_id = $1;
