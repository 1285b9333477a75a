-- name: CreateAgentJob :one
INSERT INTO agent_jobs (project_id, kind, input, max_seconds, max_tokens, actor_kind, actor_id, actor_name, created_by)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
RETURNING *;

-- name: GetAgentJob :one
-- The job with its creator and the proposals it made (oldest first), in one statement.
SELECT j.*, p.slug AS project_slug, p.workspace_id, u.email AS creator_email, u.display_name AS creator_name,
       ARRAY(SELECT pr.id FROM proposals pr WHERE pr.job_id = j.id ORDER BY pr.created_at, pr.id)::uuid[] AS proposal_ids
FROM agent_jobs j JOIN projects p ON p.id = j.project_id LEFT JOIN users u ON u.id = j.created_by
WHERE j.id = $1;

-- name: ListAgentJobs :many
-- A page of jobs (newest first) with their project's slug, their creator (null when none or gone)
-- and the proposals' ids (read in order from proposals_job_idx, 000032, for the page's jobs only, oldest first).
-- agents.(*Service).ListJobs sends this statement with binary results and writes each row as the
-- API's AgentJob document itself (impl/server/agents/joblist.go): the statement used to build
-- the document (round 5), which cost PostgreSQL more in planning and execution than the Go
-- encoder costs the server (docs/benchmarks.md, read paths round 8). The columns' order and
-- types are checked by the decoder.
SELECT j.created_at, j.id, j.kind, j.status, j.input, j.max_seconds, j.max_tokens, j.progress, j.tokens_used, j.summary, j.error,
       j.updated_at, j.started_at, j.finished_at, p.slug AS project_slug, u.id AS creator_id, u.email AS creator_email,
       u.display_name AS creator_name,
       ARRAY(SELECT pr.id FROM proposals pr WHERE pr.job_id = j.id ORDER BY pr.created_at, pr.id)::uuid[] AS proposal_ids
FROM agent_jobs j JOIN projects p ON p.id = j.project_id LEFT JOIN users u ON u.id = j.created_by
WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
  -- The project's id as a value (an InitPlan), as in ListRuns: with a status or kind the planner
  -- reads agent_jobs_project_status_idx or _kind_idx (000019) in order and stops at the page.
  AND (sqlc.narg('project')::text IS NULL OR j.project_id = (SELECT pp.id FROM projects pp WHERE pp.slug = sqlc.narg('project')::text))
  AND (sqlc.narg('status')::text IS NULL OR j.status = sqlc.narg('status')::text)
  AND (sqlc.narg('kind')::text IS NULL OR j.kind = sqlc.narg('kind')::text)
  AND (sqlc.narg('before_at')::timestamptz IS NULL OR (j.created_at, j.id) < (sqlc.narg('before_at')::timestamptz, sqlc.narg('before_id')::uuid))
ORDER BY j.created_at DESC, j.id DESC
LIMIT sqlc.arg('row_limit');

-- name: ListProjectAgentJobsByStatus :many
-- ListAgentJobs for one project and status (its columns, order and answer), written without the
-- optional filters so that one generic plan serves every value: agent_jobs_project_status_idx read
-- in order from the cursor and stopped at the page. agents.(*Service).ListJobs sends it planned
-- once per connection (store.QueryGeneric): planning the general statement for every request cost
-- PostgreSQL more than running it (docs/benchmarks.md, read paths round 9). Without a cursor the
-- bound is (infinity, the largest uuid), which no row has: ids are random (version 4) uuids.
SELECT j.created_at, j.id, j.kind, j.status, j.input, j.max_seconds, j.max_tokens, j.progress, j.tokens_used, j.summary, j.error,
       j.updated_at, j.started_at, j.finished_at, p.slug AS project_slug, u.id AS creator_id, u.email AS creator_email,
       u.display_name AS creator_name,
       ARRAY(SELECT pr.id FROM proposals pr WHERE pr.job_id = j.id ORDER BY pr.created_at, pr.id)::uuid[] AS proposal_ids
FROM agent_jobs j JOIN projects p ON p.id = j.project_id LEFT JOIN users u ON u.id = j.created_by
WHERE j.project_id = (SELECT pp.id FROM projects pp WHERE pp.slug = sqlc.arg('project')::text)
  AND j.status = sqlc.arg('status')::text
  AND (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (j.created_at, j.id) < (coalesce(sqlc.narg('before_at')::timestamptz, 'infinity'),
                              coalesce(sqlc.narg('before_id')::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
ORDER BY j.created_at DESC, j.id DESC
LIMIT sqlc.arg('row_limit');

-- name: ListProjectAgentJobsByKind :many
-- ListProjectAgentJobsByStatus for one kind (any status): agent_jobs_project_kind_idx read in
-- order from the cursor under one generic plan.
SELECT j.created_at, j.id, j.kind, j.status, j.input, j.max_seconds, j.max_tokens, j.progress, j.tokens_used, j.summary, j.error,
       j.updated_at, j.started_at, j.finished_at, p.slug AS project_slug, u.id AS creator_id, u.email AS creator_email,
       u.display_name AS creator_name,
       ARRAY(SELECT pr.id FROM proposals pr WHERE pr.job_id = j.id ORDER BY pr.created_at, pr.id)::uuid[] AS proposal_ids
FROM agent_jobs j JOIN projects p ON p.id = j.project_id LEFT JOIN users u ON u.id = j.created_by
WHERE j.project_id = (SELECT pp.id FROM projects pp WHERE pp.slug = sqlc.arg('project')::text)
  AND j.kind = sqlc.arg('kind')::text
  AND (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (j.created_at, j.id) < (coalesce(sqlc.narg('before_at')::timestamptz, 'infinity'),
                              coalesce(sqlc.narg('before_id')::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
ORDER BY j.created_at DESC, j.id DESC
LIMIT sqlc.arg('row_limit');

-- name: ClaimAgentJob :one
-- A queued job starts on this worker; nothing when it was cancelled (or already taken).
UPDATE agent_jobs SET status = 'running', worker_id = $2, heartbeat_at = now(), started_at = now(), updated_at = now()
WHERE id = $1 AND status = 'queued'
RETURNING *;

-- name: HeartbeatAgentJob :one
-- Proves the job is alive and reads whether it was asked to stop.
UPDATE agent_jobs SET heartbeat_at = now(), progress = greatest(progress, sqlc.arg('progress')::integer),
       tokens_used = sqlc.arg('tokens_used')::integer
WHERE id = $1 AND status = 'running'
RETURNING cancel_requested;

-- name: FinishAgentJob :one
UPDATE agent_jobs SET status = $2, summary = $3, error = $4, finished_at = now(), updated_at = now(),
       tokens_used = greatest(tokens_used, sqlc.arg('tokens_used')::integer),
       progress = CASE WHEN $2 = 'succeeded' THEN 100 ELSE progress END
WHERE id = $1 AND status IN ('queued', 'running')
RETURNING *;

-- name: RequestAgentJobCancel :one
-- A queued job is cancelled at once; a running one is asked to stop (its worker sees it within a second).
UPDATE agent_jobs SET cancel_requested = true, updated_at = now(),
       status = CASE WHEN status = 'queued' THEN 'cancelled' ELSE status END,
       finished_at = CASE WHEN status = 'queued' THEN now() ELSE finished_at END
WHERE id = $1 AND status IN ('queued', 'running')
RETURNING *;

-- name: ReconcileLostAgentJobs :many
-- Running jobs whose worker stopped proving it is alive failed with their process.
UPDATE agent_jobs SET status = 'failed', error = 'the process working the job stopped (no heartbeat since ' || to_char(heartbeat_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') || ')',
       finished_at = now(), updated_at = now()
WHERE status = 'running' AND heartbeat_at < now() - make_interval(secs => sqlc.arg('stale_seconds')::double precision)
RETURNING *;

-- name: NextAgentJobSeq :one
UPDATE agent_jobs SET last_seq = last_seq + 1 WHERE id = $1 RETURNING last_seq;

-- name: AppendAgentJobEvent :exec
INSERT INTO agent_job_events (job_id, seq, at, type, data) VALUES ($1, $2, $3, $4, $5);

-- name: ListAgentJobEvents :many
SELECT * FROM agent_job_events WHERE job_id = $1 AND seq > $2 ORDER BY seq LIMIT sqlc.arg('row_limit');

-- name: NotifyAgentJobEvent :exec
SELECT pg_notify('sdods_agent_events', sqlc.arg('payload')::text);

-- name: CreateProposal :one
INSERT INTO proposals (project_id, job_id, kind, status, title, target, diff, evidence, confidence)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
RETURNING *;

-- name: GetProposal :one
SELECT * FROM inbox_items WHERE id = $1;

-- name: LockProposal :one
SELECT * FROM proposals WHERE id = $1 FOR UPDATE;

-- name: ListInboxProposals :many
-- The review inbox's agent proposals, newest first: with a project, its id as a value (an InitPlan,
-- as in ListAgentJobs), so that proposals_project_status_idx (or proposals_project_idx without a
-- status; 000025) is read in order and stopped at the page. The service merges it with
-- ListInboxVisualChecks. The decider's email and name read with it (null when none or gone): no
-- statement per item.
SELECT i.*, u.email AS decider_email, u.display_name AS decider_name
FROM inbox_proposals i LEFT JOIN users u ON u.id = i.decided_by
WHERE (sqlc.arg('all_workspaces')::boolean OR i.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (sqlc.narg('project')::text IS NULL OR i.project_slug = sqlc.narg('project')::text)
  AND (sqlc.narg('project')::text IS NULL OR i.project_id = (SELECT pp.id FROM projects pp WHERE pp.slug = sqlc.narg('project')::text))
  AND (sqlc.narg('status')::text IS NULL OR i.status = sqlc.narg('status')::text)
  AND (sqlc.narg('kind')::text IS NULL OR i.kind = sqlc.narg('kind')::text)
  AND (sqlc.narg('job_id')::uuid IS NULL OR i.job_id = sqlc.narg('job_id')::uuid)
  AND i.confidence >= sqlc.arg('min_confidence')::real
  AND (sqlc.narg('before_at')::timestamptz IS NULL OR (i.created_at, i.id) < (sqlc.narg('before_at')::timestamptz, sqlc.narg('before_id')::uuid))
ORDER BY i.created_at DESC, i.id DESC
LIMIT sqlc.arg('row_limit');

-- name: ListInboxVisualChecks :many
-- The review inbox's visual checks (baseline updates), newest first, read from
-- visual_checks_inbox_idx (000025) in order; the service asks only when the kind and job filters
-- can match one. The decider read with it, as in ListInboxProposals.
SELECT i.*, u.email AS decider_email, u.display_name AS decider_name
FROM inbox_visual_checks i LEFT JOIN users u ON u.id = i.decided_by
WHERE (sqlc.arg('all_workspaces')::boolean OR i.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (sqlc.narg('project')::text IS NULL OR i.project_slug = sqlc.narg('project')::text)
  AND (sqlc.narg('project')::text IS NULL OR i.project_id = (SELECT pp.id FROM projects pp WHERE pp.slug = sqlc.narg('project')::text))
  AND (sqlc.narg('status')::text IS NULL OR i.status = sqlc.narg('status')::text)
  AND i.confidence >= sqlc.arg('min_confidence')::real
  AND (sqlc.narg('before_at')::timestamptz IS NULL OR (i.created_at, i.id) < (sqlc.narg('before_at')::timestamptz, sqlc.narg('before_id')::uuid))
ORDER BY i.created_at DESC, i.id DESC
LIMIT sqlc.arg('row_limit');

-- name: ListProjectInboxProposalsByStatus :many
-- ListInboxProposals for one project and status without a job (its columns, order and answer),
-- written without the optional index filters so that one generic plan serves every value:
-- proposals_project_status_idx read in order from the cursor and stopped at the page (the kind and
-- the confidence are filters in either plan). Sent planned once per connection with
-- ListProjectInboxVisualChecks in one round trip (agents.(*Service).ListProposals). The bound
-- without a cursor is (infinity, the largest uuid), which no row has (ids are version 4 uuids).
SELECT pr.id, pr.project_id, pr.job_id, pr.kind, pr.status, pr.title, pr.target, pr.diff, pr.evidence, pr.confidence,
       pr.decided_by, pr.decided_at, pr.reason, pr.created_at, pr.updated_at, p.slug AS project_slug, p.workspace_id,
       u.email AS decider_email, u.display_name AS decider_name
FROM proposals pr JOIN projects p ON p.id = pr.project_id LEFT JOIN users u ON u.id = pr.decided_by
WHERE pr.project_id = (SELECT pp.id FROM projects pp WHERE pp.slug = sqlc.arg('project')::text)
  AND pr.status = sqlc.arg('status')::text
  AND (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (sqlc.narg('kind')::text IS NULL OR pr.kind = sqlc.narg('kind')::text)
  AND pr.confidence >= sqlc.arg('min_confidence')::real
  AND (pr.created_at, pr.id) < (coalesce(sqlc.narg('before_at')::timestamptz, 'infinity'),
                                coalesce(sqlc.narg('before_id')::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
ORDER BY pr.created_at DESC, pr.id DESC
LIMIT sqlc.arg('row_limit');

-- name: ListProjectInboxVisualChecks :many
-- ListInboxVisualChecks for one project (its columns, order and answer), written without the
-- optional index filters so that one generic plan serves every value: visual_checks_inbox_idx read
-- in order from the cursor and stopped at the page (the status, computed by the view, is a filter
-- in either plan). The bound without a cursor as in ListProjectInboxProposalsByStatus.
SELECT i.*, u.email AS decider_email, u.display_name AS decider_name
FROM inbox_visual_checks i LEFT JOIN users u ON u.id = i.decided_by
WHERE i.project_id = (SELECT pp.id FROM projects pp WHERE pp.slug = sqlc.arg('project')::text)
  AND (sqlc.arg('all_workspaces')::boolean OR i.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (sqlc.narg('status')::text IS NULL OR i.status = sqlc.narg('status')::text)
  AND i.confidence >= sqlc.arg('min_confidence')::real
  AND (i.created_at, i.id) < (coalesce(sqlc.narg('before_at')::timestamptz, 'infinity'),
                              coalesce(sqlc.narg('before_id')::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
ORDER BY i.created_at DESC, i.id DESC
LIMIT sqlc.arg('row_limit');

-- name: LockVisualCheck :one
SELECT c.*, a.media_type AS actual_media_type, a.size_bytes AS actual_size_bytes, a.sha256 AS actual_sha256, a.blob_key AS actual_blob_key,
       EXISTS (SELECT 1 FROM visual_check_rejections rj WHERE rj.check_id = c.id)::boolean AS rejected
FROM visual_checks c JOIN artifacts a ON a.id = c.actual_artifact_id
WHERE c.id = $1 AND c.status IN ('failed', 'pending', 'accepted')
FOR UPDATE OF c;

-- name: RejectVisualCheck :exec
INSERT INTO visual_check_rejections (check_id, reason, decided_by) VALUES ($1, $2, $3);

-- name: DecideProposal :one
UPDATE proposals SET status = $2, reason = $3, decided_by = $4, decided_at = now(), updated_at = now()
WHERE id = $1
RETURNING *;

-- name: TriageFailures :many
-- The failed scenarios of a run with the evidence triage classifies them by (history: the project's earlier runs).
SELECT rs.id, rs.identity::text AS identity, rs.feature_path, rs.name, rs.example_row, rs.status, rs.attempts,
       coalesce(rs.failure_signature, '')::text AS signature, rs.heals::integer AS heals,
       coalesce(rs.error->>'message', stats_failing_step(rs.steps)->'error'->>'message', '')::text AS message,
       coalesce(stats_failing_step(rs.steps)->>'keyword', '')::text AS step_keyword,
       coalesce(stats_failing_step(rs.steps)->>'text', '')::text AS step_text,
       coalesce((stats_failing_step(rs.steps)->>'line')::integer, 0)::integer AS step_line,
       (SELECT count(*) FROM run_scenarios h JOIN runs hr ON hr.id = h.run_id
        WHERE hr.project_id = r.project_id AND h.failure_signature = rs.failure_signature AND h.run_id <> r.id AND hr.created_at < r.created_at)::bigint AS signature_seen,
       (SELECT count(*) FROM run_scenarios h JOIN runs hr ON hr.id = h.run_id
        WHERE hr.project_id = r.project_id AND h.identity = rs.identity AND h.status = 'passed' AND h.run_id <> r.id AND hr.created_at < r.created_at)::bigint AS passed_before,
       (SELECT count(*) FROM run_scenarios h JOIN runs hr ON hr.id = h.run_id
        WHERE hr.project_id = r.project_id AND h.identity = rs.identity AND h.status IN ('failed', 'undefined', 'ambiguous') AND h.run_id <> r.id AND hr.created_at < r.created_at)::bigint AS failed_before,
       -- docs/stats.md: a flip is a result that differs from the previous one; a retry pass passed after a retry.
       (SELECT count(*) FROM (
            SELECT h.status = 'passed' AS ok, lag(h.status = 'passed') OVER (ORDER BY hr.created_at, hr.id) AS prev
            FROM run_scenarios h JOIN runs hr ON hr.id = h.run_id
            WHERE hr.project_id = r.project_id AND h.identity = rs.identity AND h.status IN ('passed', 'failed', 'undefined', 'ambiguous')
              AND hr.created_at <= r.created_at) f WHERE f.prev IS NOT NULL AND f.ok <> f.prev)::bigint AS flips,
       (SELECT count(*) FROM run_scenarios h JOIN runs hr ON hr.id = h.run_id
        WHERE hr.project_id = r.project_id AND h.identity = rs.identity AND h.status = 'passed' AND h.attempts > 1 AND hr.created_at < r.created_at)::bigint AS retry_passes
FROM run_scenarios rs JOIN runs r ON r.id = rs.run_id
WHERE rs.run_id = $1 AND rs.status IN ('failed', 'undefined', 'ambiguous')
ORDER BY rs.position;

-- name: SimilarFailures :many
-- Recent failures of the project other than the run's, for the similarity ranking.
SELECT rs.run_id, rs.id AS scenario_id, rs.feature_path, rs.name, rs.failure_signature::text AS signature, coalesce(r.started_at, r.created_at)::timestamptz AS at
FROM run_scenarios rs JOIN runs r ON r.id = rs.run_id
WHERE r.project_id = $1 AND rs.run_id <> $2 AND rs.failure_signature IS NOT NULL
ORDER BY r.created_at DESC LIMIT 500;

-- name: RecurringHeals :many
-- Selector heals of a project that recurred in at least min_runs runs (same old and new selector
-- in the same feature), best score first; never a pair people rejected, nor one already proposed
-- and undecided. The runner-up is that of the occurrence whose runner-up came closest; ambiguous
-- when the runner marked any occurrence so (runner-up within the margin, docs/steps.md).
WITH h AS (
    SELECT rs.feature_path, rs.name, rs.identity, rs.run_id, r.environment,
           coalesce(x->>'oldSelector', '') AS old_selector, coalesce(x->>'newSelector', '') AS new_selector,
           coalesce(x->>'strategy', '') AS strategy, coalesce((x->>'score')::float8, 0) AS score,
           x->'runnerUp'->>'selector' AS runner_up_selector, (x->'runnerUp'->>'score')::float8 AS runner_up_score,
           coalesce((x->>'ambiguous')::boolean, false) AS ambiguous
    FROM runs r JOIN run_scenarios rs ON rs.run_id = r.id,
         jsonb_array_elements(CASE WHEN jsonb_typeof(rs.steps) = 'array' THEN rs.steps ELSE '[]'::jsonb END) st,
         jsonb_array_elements(CASE WHEN jsonb_typeof(st->'heals') = 'array' THEN st->'heals' ELSE '[]'::jsonb END) x
    WHERE r.project_id = $1 AND rs.heals > 0 AND r.status NOT IN ('queued', 'running')
)
SELECT h.feature_path::text AS feature_path, h.old_selector::text AS old_selector, h.new_selector::text AS new_selector,
       max(h.name)::text AS scenario_name, max(h.identity)::text AS identity, max(h.strategy)::text AS strategy,
       max(h.score)::float8 AS score, min(h.score)::float8 AS min_score, count(DISTINCT h.run_id)::bigint AS runs,
       coalesce(max(h.environment), '')::text AS environment,
       coalesce((array_agg(h.runner_up_selector ORDER BY h.score - h.runner_up_score NULLS LAST))[1], '')::text AS runner_up_selector,
       coalesce((array_agg(h.runner_up_score ORDER BY h.score - h.runner_up_score NULLS LAST))[1], -1)::float8 AS runner_up_score,
       coalesce(min(h.score - h.runner_up_score), -1)::float8 AS min_gap,
       bool_or(h.ambiguous)::boolean AS ambiguous,
       -- how many elements the same old selector was healed to in this feature
       (SELECT count(DISTINCT h2.new_selector) FROM h h2 WHERE h2.feature_path = h.feature_path AND h2.old_selector = h.old_selector)::bigint AS targets
FROM h
WHERE h.old_selector <> '' AND h.new_selector <> ''
  AND NOT EXISTS (SELECT 1 FROM proposals pr WHERE pr.project_id = $1 AND pr.kind = 'feature_patch'
                  AND pr.evidence->>'oldSelector' = h.old_selector AND pr.evidence->>'newSelector' = h.new_selector
                  AND (pr.status = 'rejected' OR (pr.status IN ('pending', 'verified') AND pr.target->>'featurePath' = h.feature_path)))
GROUP BY h.feature_path, h.old_selector, h.new_selector
HAVING count(DISTINCT h.run_id) >= sqlc.arg('min_runs')::bigint
ORDER BY 7 DESC, 1, 2;

-- name: CreateFeaturePatchProposal :one
INSERT INTO proposals (project_id, job_id, kind, status, title, target, diff, evidence, confidence, content_after)
VALUES ($1, $2, 'feature_patch', 'pending', $3, $4, $5, $6, $7, $8)
RETURNING *;

-- name: SetProposalVerification :one
UPDATE proposals SET status = CASE WHEN sqlc.arg('passed')::boolean AND status = 'pending' THEN 'verified' ELSE status END,
       verification_run_id = $2, evidence = evidence || jsonb_build_object('verification', sqlc.arg('verification')::jsonb), updated_at = now()
WHERE id = $1
RETURNING *;

-- name: MarkProposalStale :exec
UPDATE proposals SET status = 'stale', updated_at = now() WHERE id = $1 AND status IN ('pending', 'verified');

-- name: InsertRunFeatureOverride :exec
INSERT INTO run_feature_overrides (run_id, path, content) VALUES ($1, $2, $3);

-- name: ListRunFeatureOverrides :many
SELECT path, content FROM run_feature_overrides WHERE run_id = $1;

-- name: GetLlmConfig :one
SELECT * FROM agent_llm_config WHERE singleton;

-- name: PutLlmConfig :one
INSERT INTO agent_llm_config (singleton, enabled, endpoint, model, key_sealed, include, updated_by)
VALUES (true, $1, $2, $3, $4, $5, $6)
ON CONFLICT (singleton) DO UPDATE SET enabled = EXCLUDED.enabled, endpoint = EXCLUDED.endpoint, model = EXCLUDED.model,
    key_sealed = coalesce(EXCLUDED.key_sealed, agent_llm_config.key_sealed), include = EXCLUDED.include,
    updated_by = EXCLUDED.updated_by, updated_at = now()
RETURNING *;

-- name: ProjectEnvironments :many
SELECT * FROM environments WHERE project_id = $1 ORDER BY name;

-- name: FlakyBrowserScenarios :many
-- Scenario identities of a project with both passed and failed results since since, whose
-- failures are in a browser step: the step that failed most often and its element.
WITH res AS (
    SELECT rs.identity, rs.feature_path, rs.name, rs.example_row, rs.status, rs.steps, r.environment
    FROM runs r JOIN run_scenarios rs ON rs.run_id = r.id
    WHERE r.project_id = $1 AND r.status NOT IN ('queued', 'running') AND coalesce(r.started_at, r.created_at) >= sqlc.arg('since')::timestamptz
      AND (r.trigger <> 'agent')
), fl AS (
    SELECT identity FROM res GROUP BY identity
    HAVING count(*) FILTER (WHERE status = 'passed') > 0 AND count(*) FILTER (WHERE status IN ('failed', 'undefined', 'ambiguous')) > 0
), steps AS (
    SELECT res.identity, stats_failing_step(res.steps)->>'text' AS step_text, stats_failing_step(res.steps)->>'keyword' AS keyword,
           stats_locator(stats_failing_step(res.steps)->>'text') AS locator
    FROM res JOIN fl USING (identity) WHERE res.status IN ('failed', 'undefined', 'ambiguous')
)
SELECT f.identity::text AS identity, max(res.feature_path)::text AS feature_path, max(res.name)::text AS name, coalesce(max(res.example_row), -1)::int AS example_row,
       count(*) FILTER (WHERE res.status = 'passed')::bigint AS passed, count(*) FILTER (WHERE res.status <> 'passed')::bigint AS failed,
       coalesce(max(res.environment), '')::text AS environment,
       coalesce((SELECT s.step_text FROM steps s WHERE s.identity = f.identity AND s.locator IS NOT NULL GROUP BY s.step_text ORDER BY count(*) DESC, 1 LIMIT 1), '')::text AS step_text,
       coalesce((SELECT s.locator FROM steps s WHERE s.identity = f.identity AND s.locator IS NOT NULL GROUP BY s.locator ORDER BY count(*) DESC, 1 LIMIT 1), '')::text AS locator
FROM fl f JOIN res ON res.identity = f.identity
GROUP BY f.identity
ORDER BY 6 DESC, 2, 3;

-- name: RejectedHealReplacements :many
-- The selector replacements reviewers rejected in a project (rejected heal patches): the runner
-- never heals a selector to an element one of them matches (docs/agents.md, Reject). The latest
-- rejection of each pair names the proposal and its reason.
SELECT DISTINCT ON (old_selector, new_selector) old_selector::text AS old_selector, new_selector::text AS new_selector, id, coalesce(reason, '')::text AS reason
FROM (SELECT pr.evidence->>'oldSelector' AS old_selector, pr.evidence->>'newSelector' AS new_selector, pr.id, pr.reason, pr.decided_at
      FROM proposals pr
      WHERE pr.project_id = $1 AND pr.kind = 'feature_patch' AND pr.status = 'rejected'
        AND coalesce(pr.evidence->>'oldSelector', '') <> '' AND coalesce(pr.evidence->>'newSelector', '') <> '') r
ORDER BY old_selector, new_selector, decided_at DESC NULLS LAST;
