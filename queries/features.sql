-- name: GetFeature :one
SELECT * FROM features WHERE project_id = $1 AND path = $2;

-- name: GetFeatureForUpdate :one
SELECT * FROM features WHERE project_id = $1 AND path = $2 FOR UPDATE;

-- name: InsertFeature :one
INSERT INTO features (project_id, path, module, content, etag, name, tags, scenario_count, size_bytes, synced_etag)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING *;

-- name: UpdateFeature :one
UPDATE features SET content = $3, etag = $4, name = $5, tags = $6, scenario_count = $7, size_bytes = $8,
    synced_etag = $9, updated_at = now()
WHERE project_id = $1 AND path = $2 RETURNING *;

-- name: DeleteFeature :execrows
DELETE FROM features WHERE project_id = $1 AND path = $2;

-- name: ListFeatures :many
SELECT id, project_id, path, module, etag, name, tags, scenario_count, size_bytes, created_at, updated_at
FROM features
WHERE project_id = sqlc.arg('project_id')
  AND (sqlc.narg('prefix')::text IS NULL OR path LIKE sqlc.narg('prefix')::text || '%')
  AND (sqlc.narg('tag')::text IS NULL OR sqlc.narg('tag')::text = ANY (tags))
  AND (sqlc.narg('after_path')::text IS NULL OR path > sqlc.narg('after_path')::text)
ORDER BY path
LIMIT sqlc.arg('row_limit');

-- name: AllFeatures :many
-- Every feature of a project with its content, for linting, step usage and sync.
SELECT * FROM features WHERE project_id = $1 ORDER BY path;
