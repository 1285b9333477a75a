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
-- A page of schedules (oldest first), each one built here as the API's Schedule document (issue 31
-- item 3: the server splices the items into the page without decoding them): the fields
-- toSchedule (impl/server/httpapi/schedules.go) writes for a schedule read without its firings
-- and last run, in its order, an optional field left out when null, times through api_time
-- (000029), the creator and pauser from users (no statement per row), the run template as
-- json.Unmarshal into schedules.Template leaves it (a string field's value as it is, any other
-- value but null an empty string; an integer's as it is, any other 0; paths and variables when
-- an array and an object, an element or value that is not a string an empty string). With a project, its id as a value (an
-- InitPlan, as in ListAgentJobs). TestScheduleListItemsMatchTheirDetail compares each item with
-- the schedule's detail.
SELECT s.created_at, s.id,
       ('{"catchUpMax":' || s.catch_up_max::text || ',"catchUpWindowSeconds":' || s.catch_up_window_seconds::text
        || ',"consecutiveFailures":0,"createdAt":' || left(to_json(s.created_at AT TIME ZONE 'UTC')::text, -1) || 'Z"'
        || coalesce(',"createdBy":{"displayName":' || to_json(cu.display_name)::text || ',"email":' || to_json(cu.email)::text || ',"id":"' || cu.id::text || '"}', '')
        || ',"cron":' || to_json(s.cron)::text
        || coalesce(',"endAt":' || left(to_json(s.end_at AT TIME ZONE 'UTC')::text, -1) || 'Z"', '')
        || ',"id":"' || s.id::text || '","jitterSeconds":' || s.jitter_seconds::text || ',"name":' || to_json(s.name)::text
        || CASE WHEN s.status = 'active' THEN coalesce(',"nextRunAt":' || left(to_json(s.next_fire_at AT TIME ZONE 'UTC')::text, -1) || 'Z"', '') ELSE '' END
        || ',"overlap":' || to_json(s.overlap)::text
        || coalesce(',"pauseAfterFailures":' || s.pause_after_failures::text, '')
        || CASE WHEN s.status = 'paused' THEN coalesce(',"paused":{"at":' || left(to_json(s.paused_at AT TIME ZONE 'UTC')::text, -1) || 'Z"'
               || coalesce(',"by":{"displayName":' || to_json(pu.display_name)::text || ',"email":' || to_json(pu.email)::text || ',"id":"' || pu.id::text || '"}', '')
               || coalesce(',"note":' || to_json(s.pause_note)::text, '') || '}', '') ELSE '' END
        || ',"project":' || to_json(p.slug)::text || ',"recentFirings":[],"run":'
        || CASE WHEN jsonb_typeof(s.template) = 'object' THEN json_strip_nulls(json_build_object(
               'environment', CASE WHEN jsonb_typeof(s.template->'environment') = 'string' THEN s.template->'environment' WHEN jsonb_typeof(s.template->'environment') <> 'null' THEN '""' END,
               'label', CASE WHEN jsonb_typeof(s.template->'label') = 'string' THEN s.template->'label' WHEN jsonb_typeof(s.template->'label') <> 'null' THEN '""' END,
               'paths', CASE WHEN jsonb_typeof(s.template->'paths') = 'array' THEN (SELECT coalesce(jsonb_agg(CASE WHEN jsonb_typeof(e.v) = 'string' THEN e.v ELSE '""' END ORDER BY e.n), '[]')
                   FROM jsonb_array_elements(s.template->'paths') WITH ORDINALITY e(v, n)) END,
               'retries', CASE WHEN jsonb_typeof(s.template->'retries') = 'number' AND s.template->>'retries' ~ '^-?[0-9]+$' THEN s.template->'retries' WHEN jsonb_typeof(s.template->'retries') <> 'null' THEN '0' END,
               'tags', CASE WHEN jsonb_typeof(s.template->'tags') = 'string' THEN s.template->'tags' WHEN jsonb_typeof(s.template->'tags') <> 'null' THEN '""' END,
               'timeoutSeconds', CASE WHEN jsonb_typeof(s.template->'timeoutSeconds') = 'number' AND s.template->>'timeoutSeconds' ~ '^-?[0-9]+$' THEN s.template->'timeoutSeconds' WHEN jsonb_typeof(s.template->'timeoutSeconds') <> 'null' THEN '0' END,
               'variables', CASE WHEN jsonb_typeof(s.template->'variables') = 'object' THEN (SELECT coalesce(jsonb_object_agg(e.k, CASE WHEN jsonb_typeof(e.v) = 'string' THEN e.v ELSE '""' END), '{}')
                   FROM jsonb_each(s.template->'variables') e(k, v)) END))::text
             ELSE '{}' END
        || coalesce(',"startAt":' || left(to_json(s.start_at AT TIME ZONE 'UTC')::text, -1) || 'Z"', '')
        || ',"status":' || to_json(s.status)::text || ',"timezone":' || to_json(s.timezone)::text
        || ',"updatedAt":' || left(to_json(s.updated_at AT TIME ZONE 'UTC')::text, -1) || 'Z"}')::text AS item
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
