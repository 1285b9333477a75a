-- name: CreateSchedule :one
INSERT INTO schedules (project_id, name, cron, timezone, template, overlap, catch_up_window_seconds, catch_up_max,
                       jitter_seconds, start_at, end_at, status, paused_at, paused_by, pause_note, pause_after_failures,
                       next_fire_at, next_due_at, created_by)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
RETURNING *;

-- name: GetSchedule :one
SELECT sqlc.embed(s), p.slug AS project_slug, p.workspace_id
FROM schedules s JOIN projects p ON p.id = s.project_id
WHERE s.id = $1;

-- name: ListSchedules :many
-- A page of schedules (oldest first) with their creator's and pauser's email and name (null when
-- none or when the user is gone), so that no statement is sent per schedule. With a project, its
-- id as a value (an InitPlan, as in ListAgentJobs).
SELECT sqlc.embed(s), p.slug AS project_slug, p.workspace_id,
       cu.email AS creator_email, cu.display_name AS creator_name, pu.email AS pauser_email, pu.display_name AS pauser_name
FROM schedules s JOIN projects p ON p.id = s.project_id
     LEFT JOIN users cu ON cu.id = s.created_by LEFT JOIN users pu ON pu.id = s.paused_by
WHERE (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
  AND (sqlc.narg('project')::text IS NULL OR s.project_id = (SELECT pp.id FROM projects pp WHERE pp.slug = sqlc.narg('project')::text))
  AND (sqlc.narg('status')::text IS NULL OR s.status = sqlc.narg('status')::text)
  AND (sqlc.narg('after_at')::timestamptz IS NULL
       OR (s.created_at, s.id) > (sqlc.narg('after_at')::timestamptz, sqlc.narg('after_id')::uuid))
ORDER BY s.created_at, s.id
LIMIT sqlc.arg('row_limit');

-- name: ListProjectSchedulesByStatus :many
-- ListSchedules for one project and status (its columns, order and answer), written without the
-- optional filters so that one generic plan serves every value: schedules_project_status_list_idx
-- read in order from the cursor and stopped at the page. schedules.(*Service).List sends it
-- planned once per connection (store.QueryGeneric). Without a cursor the bound is (-infinity, the
-- nil uuid), which no row has: ids are random (version 4) uuids.
SELECT sqlc.embed(s), p.slug AS project_slug, p.workspace_id,
       cu.email AS creator_email, cu.display_name AS creator_name, pu.email AS pauser_email, pu.display_name AS pauser_name
FROM schedules s JOIN projects p ON p.id = s.project_id
     LEFT JOIN users cu ON cu.id = s.created_by LEFT JOIN users pu ON pu.id = s.paused_by
WHERE s.project_id = (SELECT pp.id FROM projects pp WHERE pp.slug = sqlc.arg('project')::text)
  AND s.status = sqlc.arg('status')::text
  AND (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (s.created_at, s.id) > (coalesce(sqlc.narg('after_at')::timestamptz, '-infinity'),
                              coalesce(sqlc.narg('after_id')::uuid, '00000000-0000-0000-0000-000000000000'))
ORDER BY s.created_at, s.id
LIMIT sqlc.arg('row_limit');

-- name: UpdateSchedule :one
UPDATE schedules SET name = $2, cron = $3, timezone = $4, template = $5, overlap = $6, catch_up_window_seconds = $7,
    catch_up_max = $8, jitter_seconds = $9, start_at = $10, end_at = $11, pause_after_failures = $12,
    next_fire_at = $13, next_due_at = $14, updated_at = now()
WHERE id = $1
RETURNING *;

-- name: DeleteSchedule :execrows
DELETE FROM schedules WHERE id = $1;

-- name: PauseSchedule :one
UPDATE schedules SET status = 'paused', paused_at = now(), paused_by = $2, pause_note = $3, updated_at = now()
WHERE id = $1
RETURNING *;

-- name: ResumeSchedule :one
UPDATE schedules SET status = 'active', paused_at = NULL, paused_by = NULL, pause_note = NULL, failures_since = now(),
    next_fire_at = $2, next_due_at = $3, updated_at = now()
WHERE id = $1
RETURNING *;

-- name: LockSchedule :one
-- Takes a schedule for firing; another process firing it at the same moment is skipped, not waited for.
SELECT * FROM schedules WHERE id = $1 FOR UPDATE SKIP LOCKED;

-- name: LockScheduleWait :one
-- Takes a schedule for a change made by a request (run-now, resume), waiting for a firing in progress.
SELECT * FROM schedules WHERE id = $1 FOR UPDATE;

-- name: SetScheduleCursor :exec
UPDATE schedules SET next_fire_at = $2, next_due_at = $3 WHERE id = $1;

-- name: DueSchedules :many
-- Active schedules with a firing due, or with a buffered firing waiting for its turn.
SELECT s.id FROM schedules s
WHERE s.status = 'active'
  AND (s.next_due_at <= sqlc.arg('now')::timestamptz
       OR EXISTS (SELECT 1 FROM schedule_firings f WHERE f.schedule_id = s.id AND f.status = 'buffered'))
ORDER BY s.next_due_at NULLS LAST
LIMIT sqlc.arg('row_limit');

-- name: InsertFiring :one
-- At most one record per scheduled time: a second insert of the same time returns no row.
INSERT INTO schedule_firings (schedule_id, scheduled_time, manual, status, reason, missed_count, last_time, run_id, fired_by)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
ON CONFLICT (schedule_id, scheduled_time) WHERE NOT manual DO NOTHING
RETURNING *;

-- name: InsertManualFiring :one
INSERT INTO schedule_firings (schedule_id, scheduled_time, manual, status, reason, run_id, fired_by)
VALUES ($1, $2, true, 'started', $3, $4, $5)
RETURNING *;

-- name: BufferedFirings :many
SELECT * FROM schedule_firings WHERE schedule_id = $1 AND status = 'buffered' ORDER BY scheduled_time;

-- name: StartBufferedFiring :exec
UPDATE schedule_firings SET status = 'started', reason = 'buffered', run_id = $2, fired_by = $3 WHERE id = $1 AND status = 'buffered';

-- name: DropBufferedFirings :exec
-- A paused, edited or resumed schedule forgets the firings it kept waiting.
UPDATE schedule_firings SET status = 'missed', reason = sqlc.arg('reason')::text WHERE schedule_id = $1 AND status = 'buffered';

-- name: ActiveScheduleRuns :many
SELECT id FROM runs WHERE schedule_id = $1 AND status IN ('queued', 'running') ORDER BY created_at;

-- name: RecentFirings :many
SELECT f.*, r.status AS run_status
FROM schedule_firings f LEFT JOIN runs r ON r.id = f.run_id
WHERE f.schedule_id = $1
ORDER BY f.recorded_at DESC, f.scheduled_time DESC
LIMIT sqlc.arg('row_limit');

-- name: LastScheduleRun :one
SELECT id, status, created_at FROM runs WHERE schedule_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1;

-- name: ConsecutiveFailures :one
-- Scheduled runs that ended failed, errored or timed out since the last that passed (and since failures_since).
SELECT count(*)::int FROM runs r
WHERE r.schedule_id = sqlc.arg('schedule_id') AND r.trigger = 'schedule' AND r.created_at >= sqlc.arg('since')::timestamptz
  AND r.status IN ('failed', 'errored', 'timed_out')
  AND r.created_at > COALESCE((SELECT max(p.created_at) FROM runs p
                               WHERE p.schedule_id = sqlc.arg('schedule_id') AND p.trigger = 'schedule' AND p.status = 'passed'),
                              '-infinity'::timestamptz);

-- name: SchedulesToAutoPause :many
-- Active schedules whose last pause_after_failures finished scheduled runs (since failures_since) all failed.
SELECT s.id, s.pause_after_failures FROM schedules s
WHERE s.status = 'active' AND s.pause_after_failures IS NOT NULL
  AND (SELECT count(*) FROM (
         SELECT r.status FROM runs r
         WHERE r.schedule_id = s.id AND r.trigger = 'schedule' AND r.created_at >= s.failures_since
           AND r.status IN ('passed', 'failed', 'errored', 'timed_out', 'cancelled')
         ORDER BY r.created_at DESC LIMIT s.pause_after_failures) last
       WHERE last.status IN ('failed', 'errored', 'timed_out')) >= s.pause_after_failures;

-- name: UpcomingSchedules :many
-- A batch of the active schedules in order of their next firing (up to until), after (fire at, id)
-- of the previous batch: ListUpcoming reads batches until no later schedule can fire within its
-- page. Read in order from schedules_next_fire_idx (000022), or with a project from
-- schedules_project_next_fire_idx, its id given as a value (an InitPlan) as in ListRuns. Only the
-- columns the firings are computed from (not the run template).
SELECT s.id, s.name, s.cron, s.timezone, s.jitter_seconds, s.end_at, s.next_fire_at, p.slug AS project_slug
FROM schedules s JOIN projects p ON p.id = s.project_id
WHERE s.status = 'active' AND s.next_fire_at <= sqlc.arg('until')::timestamptz
  AND (sqlc.arg('all_workspaces')::boolean OR p.workspace_id = ANY(sqlc.arg('workspace_ids')::uuid[]))
  AND (sqlc.narg('project')::text IS NULL OR p.slug = sqlc.narg('project')::text)
  AND (sqlc.narg('project')::text IS NULL OR s.project_id = (SELECT pp.id FROM projects pp WHERE pp.slug = sqlc.narg('project')::text))
  AND (sqlc.narg('schedule')::uuid IS NULL OR s.id = sqlc.narg('schedule')::uuid)
  AND (sqlc.narg('after_at')::timestamptz IS NULL OR (s.next_fire_at, s.id) > (sqlc.narg('after_at')::timestamptz, sqlc.narg('after_id')::uuid))
ORDER BY s.next_fire_at, s.id
LIMIT sqlc.arg('row_limit');

-- name: SetFiringRun :exec
UPDATE schedule_firings SET run_id = $2 WHERE id = $1;

-- name: ScheduleProject :one
SELECT slug, workspace_id, settings FROM projects WHERE id = $1;
