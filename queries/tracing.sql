-- Traces of scenarios (docs/reports.md, "Trace diff").

-- name: TraceScenario :one
-- A run's scenario with what the trace diff needs to find its baseline.
SELECT rs.id, rs.run_id, rs.scenario_key, rs.identity, rs.status, r.project_id,
       coalesce(r.started_at, r.created_at)::timestamptz AS run_at
FROM run_scenarios rs JOIN runs r ON r.id = rs.run_id
WHERE rs.run_id = @run_id AND rs.id = @id;

-- name: TraceBaseline :one
-- The most recent earlier run's passed scenario of the same identity that kept a trace.
SELECT rs.id, rs.run_id, rs.scenario_key, rs.started_at
FROM run_scenarios rs JOIN runs r ON r.id = rs.run_id
WHERE r.project_id = @project_id AND rs.identity = @identity AND rs.status = 'passed' AND rs.run_id <> @run_id
  AND coalesce(r.started_at, r.created_at) <= @before::timestamptz
  AND EXISTS (SELECT 1 FROM artifacts a WHERE a.run_id = rs.run_id AND a.scenario_key = rs.scenario_key
              AND a.step_index IS NULL AND a.name LIKE 'trace-a%.json')
ORDER BY coalesce(r.started_at, r.created_at) DESC
LIMIT 1;

-- name: TraceManifests :many
-- The trace manifests of a run's scenario, one per recorded attempt kept.
SELECT id, name, blob_key, size_bytes FROM artifacts
WHERE run_id = @run_id AND scenario_key = @scenario_key AND step_index IS NULL AND name LIKE 'trace-a%.json'
ORDER BY created_at;

-- name: ProjectTracing :one
-- What the runner records of the project's runs (projects.Settings.Tracing; on_failure when unset).
SELECT coalesce(settings->>'tracing', 'on_failure')::text AS tracing FROM projects WHERE id = @id;
