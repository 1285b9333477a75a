-- name: GetVisualBaseline :one
SELECT * FROM visual_baselines WHERE project_id = $1 AND name = $2 AND browser = $3 AND viewport = $4;

-- name: InsertPendingBaseline :one
-- The first capture of a name, browser and viewport becomes the baseline (pending review); a
-- concurrent first capture loses (no row) and compares with the winner's.
INSERT INTO visual_baselines (project_id, name, browser, viewport, status, media_type, size_bytes, sha256, blob_key, source_run_id)
VALUES ($1, $2, $3, $4, 'pending', $5, $6, $7, $8, $9)
ON CONFLICT (project_id, name, browser, viewport) DO NOTHING
RETURNING *;

-- name: AcceptBaseline :exec
INSERT INTO visual_baselines (project_id, name, browser, viewport, status, media_type, size_bytes, sha256, blob_key, source_run_id, accepted_by)
VALUES ($1, $2, $3, $4, 'accepted', $5, $6, $7, $8, $9, $10)
ON CONFLICT (project_id, name, browser, viewport) DO UPDATE SET
    status = 'accepted', media_type = EXCLUDED.media_type, size_bytes = EXCLUDED.size_bytes, sha256 = EXCLUDED.sha256,
    blob_key = EXCLUDED.blob_key, source_run_id = EXCLUDED.source_run_id, accepted_by = EXCLUDED.accepted_by, updated_at = now();

-- name: InsertVisualCheck :one
INSERT INTO visual_checks (run_id, project_id, scenario_id, step_index, name, browser, viewport, selector, status,
                           actual_artifact_id, expected_artifact_id, diff_artifact_id, mismatch_pixels, mismatch_ratio, threshold, size_mismatch)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
RETURNING *;

-- name: ListRunBaselineChecks :many
-- A page of a run's checks needing (or having had) review, oldest first.
SELECT * FROM visual_checks
WHERE run_id = $1 AND status IN ('failed', 'pending', 'accepted')
  AND (sqlc.narg('after_at')::timestamptz IS NULL OR (created_at, id) > (sqlc.narg('after_at')::timestamptz, sqlc.narg('after_id')::uuid))
ORDER BY created_at, id
LIMIT sqlc.arg('row_limit');

-- name: LockRunBaselineChecks :many
-- Every reviewable check of a run, locked for acceptance.
SELECT c.*, a.media_type AS actual_media_type, a.size_bytes AS actual_size_bytes, a.sha256 AS actual_sha256, a.blob_key AS actual_blob_key
FROM visual_checks c JOIN artifacts a ON a.id = c.actual_artifact_id
WHERE c.run_id = $1 AND c.status IN ('failed', 'pending', 'accepted')
ORDER BY c.created_at, c.id
FOR UPDATE OF c;

-- name: MarkVisualChecksAccepted :exec
UPDATE visual_checks SET status = 'accepted', accepted_at = now(), accepted_by = sqlc.narg('accepted_by')
WHERE id = ANY(sqlc.arg('ids')::uuid[]);

-- name: GetArtifactWithWorkspace :one
SELECT a.*, p.workspace_id FROM artifacts a JOIN projects p ON p.id = a.project_id WHERE a.id = $1;

-- name: InsertCachedArtifact :one
-- A computed result (a diff image) is cached under an id derived from its inputs: the same
-- computation again inserts nothing (no row returned), concurrent ones included.
INSERT INTO artifacts (id, project_id, name, kind, media_type, size_bytes, sha256, blob_key)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (id) DO NOTHING
RETURNING *;
