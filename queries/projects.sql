-- name: CreateProject :one
INSERT INTO projects (workspace_id, slug, name, description, settings) VALUES ($1, $2, $3, $4, $5) RETURNING *;

-- name: GetProjectBySlug :one
SELECT p.*, w.slug AS workspace_slug, w.name AS workspace_name
FROM projects p JOIN workspaces w ON w.id = p.workspace_id
WHERE p.slug = $1;

-- name: UpdateProject :one
UPDATE projects SET name = $2, description = $3, settings = $4, updated_at = now() WHERE id = $1 RETURNING *;

-- name: ListProjectsForUser :many
-- The projects of the workspaces where the user has a role (all of them for an instance admin).
SELECT p.*, w.slug AS workspace_slug, w.name AS workspace_name
FROM projects p
JOIN workspaces w ON w.id = p.workspace_id
LEFT JOIN workspace_members wm ON wm.workspace_id = w.id AND wm.user_id = sqlc.arg('user_id')
LEFT JOIN org_members om ON om.org_id = w.org_id AND om.user_id = sqlc.arg('user_id')
WHERE (sqlc.arg('instance_admin')::boolean OR wm.user_id IS NOT NULL OR om.role = 'admin')
  AND (sqlc.narg('workspace_slug')::text IS NULL OR w.slug = sqlc.narg('workspace_slug')::text)
  AND (sqlc.narg('after_slug')::text IS NULL OR p.slug > sqlc.narg('after_slug')::text)
  AND (sqlc.narg('query')::text IS NULL OR p.slug ILIKE '%' || sqlc.narg('query')::text || '%'
       OR p.name ILIKE '%' || sqlc.narg('query')::text || '%')
ORDER BY p.slug
LIMIT sqlc.arg('row_limit');

-- name: CreateEnvironment :one
INSERT INTO environments (project_id, name, base_url, description, variables) VALUES ($1, $2, $3, $4, $5) RETURNING *;

-- name: GetEnvironment :one
SELECT * FROM environments WHERE project_id = $1 AND name = $2;

-- name: GetEnvironmentForUpdate :one
SELECT * FROM environments WHERE project_id = $1 AND name = $2 FOR UPDATE;

-- name: UpdateEnvironment :one
UPDATE environments SET base_url = $2, description = $3, variables = $4, updated_at = now() WHERE id = $1 RETURNING *;

-- name: DeleteEnvironment :execrows
DELETE FROM environments WHERE project_id = $1 AND name = $2;

-- name: ListEnvironments :many
SELECT * FROM environments
WHERE project_id = sqlc.arg('project_id')
  AND (sqlc.narg('after_name')::text IS NULL OR name > sqlc.narg('after_name')::text)
ORDER BY name
LIMIT sqlc.arg('row_limit');

-- name: CreateDataset :one
INSERT INTO datasets (project_id, name, format, size_bytes, row_count, columns, sha256, blob_key)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *;

-- name: GetDataset :one
SELECT * FROM datasets WHERE project_id = $1 AND name = $2;

-- name: ReplaceDataset :one
UPDATE datasets SET format = $2, size_bytes = $3, row_count = $4, columns = $5, sha256 = $6, blob_key = $7, updated_at = now()
WHERE id = $1 RETURNING *;

-- name: DeleteDataset :one
DELETE FROM datasets WHERE project_id = $1 AND name = $2 RETURNING blob_key;

-- name: CountBlobReferences :one
-- Rows of every table that holds keys of the shared blob store.
SELECT ((SELECT count(*) FROM datasets d WHERE d.blob_key = sqlc.arg('key')::text)
      + (SELECT count(*) FROM artifacts a WHERE a.blob_key = sqlc.arg('key')::text)
      + (SELECT count(*) FROM visual_baselines v WHERE v.blob_key = sqlc.arg('key')::text))::int AS refs;

-- name: LockBlob :exec
-- Serializes, until the end of the transaction, the writers and the deleter of one blob key.
SELECT pg_advisory_xact_lock(hashtextextended('blob:' || sqlc.arg('key')::text, 0));

-- name: ListDatasets :many
SELECT * FROM datasets
WHERE project_id = sqlc.arg('project_id')
  AND (sqlc.narg('after_name')::text IS NULL OR name > sqlc.narg('after_name')::text)
ORDER BY name
LIMIT sqlc.arg('row_limit');

-- name: CreateProcess :one
INSERT INTO processes (project_id, name, description, content, parameters) VALUES ($1, $2, $3, $4, $5) RETURNING *;

-- name: GetProcess :one
SELECT * FROM processes WHERE project_id = $1 AND name = $2;

-- name: UpdateProcess :one
UPDATE processes SET description = $3, content = $4, parameters = $5, updated_at = now()
WHERE project_id = $1 AND name = $2 RETURNING *;

-- name: DeleteProcess :execrows
DELETE FROM processes WHERE project_id = $1 AND name = $2;

-- name: ListProcesses :many
SELECT * FROM processes
WHERE project_id = sqlc.arg('project_id')
  AND (sqlc.narg('after_name')::text IS NULL OR name > sqlc.narg('after_name')::text)
ORDER BY name
LIMIT sqlc.arg('row_limit');

-- name: AllProcesses :many
SELECT * FROM processes WHERE project_id = $1 ORDER BY name;

-- name: GetIntegration :one
SELECT * FROM integrations WHERE project_id = $1 AND kind = $2;

-- name: ListIntegrations :many
SELECT * FROM integrations
WHERE project_id = sqlc.arg('project_id')
  AND (sqlc.narg('after_kind')::text IS NULL OR kind > sqlc.narg('after_kind')::text)
ORDER BY kind
LIMIT sqlc.arg('row_limit');

-- name: UpsertIntegration :one
INSERT INTO integrations (project_id, kind, enabled, config, secret_enc) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (project_id, kind) DO UPDATE SET enabled = EXCLUDED.enabled, config = EXCLUDED.config,
    secret_enc = EXCLUDED.secret_enc, updated_at = now()
RETURNING *, (xmax = 0) AS inserted;

-- name: DeleteIntegration :execrows
DELETE FROM integrations WHERE project_id = $1 AND kind = $2;

-- name: SetIntegrationLastTest :exec
UPDATE integrations SET last_test = $3 WHERE project_id = $1 AND kind = $2;

-- name: SetIntegrationLastSync :exec
UPDATE integrations SET last_sync = $3 WHERE project_id = $1 AND kind = $2;

-- name: EnabledWebhooks :many
-- The enabled webhook integrations of a project, for notifying run outcomes.
SELECT * FROM integrations WHERE project_id = $1 AND kind = 'webhook' AND enabled;

-- name: ProjectSettings :one
-- A project's stored settings, read by the worker that executes one of its runs.
SELECT settings FROM projects WHERE id = $1;
