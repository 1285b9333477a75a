-- name: LockRun :one
-- Serialises the ingests of one run.
SELECT id, status, source, error FROM runs WHERE id = $1 FOR UPDATE;

-- name: GetRunIngest :one
SELECT * FROM run_ingests WHERE run_id = $1 AND idempotency_key = $2;

-- name: InsertRunIngest :exec
INSERT INTO run_ingests (run_id, idempotency_key, sha256, format, artifact_id, scenarios, result)
VALUES ($1, $2, $3, $4, $5, $6, $7);

-- name: RunScenarioStatusCounts :many
-- A run's scenarios by status and attempts, for its counts.
SELECT status, attempts, count(*)::int AS n FROM run_scenarios WHERE run_id = $1 GROUP BY status, attempts;

-- name: NextScenarioPosition :one
SELECT COALESCE(MAX(position) + 1, 0)::integer FROM run_scenarios WHERE run_id = $1;

-- name: FinishIngestRun :one
-- An ingest-only run takes the status of everything ingested into it so far.
UPDATE runs SET status = $2, counts = $3, error = sqlc.narg('error'),
    started_at = LEAST(COALESCE(started_at, sqlc.arg('started_at')::timestamptz), sqlc.arg('started_at')::timestamptz),
    finished_at = GREATEST(COALESCE(finished_at, sqlc.arg('finished_at')::timestamptz), sqlc.arg('finished_at')::timestamptz),
    updated_at = now()
WHERE id = $1 AND source = 'ingest'
RETURNING *;

-- name: CancelIngestRun :one
-- No worker executes an ingest-only run: cancelling it ends it at once.
UPDATE runs SET status = 'cancelled', cancel_requested = true, finished_at = now(), updated_at = now()
WHERE id = $1 AND source = 'ingest' AND status IN ('queued', 'running')
RETURNING *;

-- name: ListRunLogEvents :many
-- Log lines of a run for its trace (oldest first).
SELECT (b.first_seq + e.n - 1)::bigint AS seq, e.at::timestamptz AS at, e.data::json AS data
FROM run_event_batches b
CROSS JOIN LATERAL ROWS FROM (unnest(b.ats), unnest(b.types), unnest(b.datas)) WITH ORDINALITY AS e(at, type, data, n)
WHERE b.run_id = sqlc.arg('run_id')::uuid AND e.type = 'log'
ORDER BY b.last_seq, e.n LIMIT sqlc.arg('row_limit');
