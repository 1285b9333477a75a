-- name: CreatePoolAccount :one
INSERT INTO pool_accounts (project_id, username, password_enc, tags, attributes, environment)
VALUES ($1, $2, $3, $4, $5, $6) RETURNING *;

-- name: GetPoolAccount :one
SELECT * FROM pool_accounts WHERE project_id = $1 AND id = $2;

-- name: UpdatePoolAccount :one
UPDATE pool_accounts SET username = $3, password_enc = $4, tags = $5, attributes = $6, environment = $7, updated_at = now()
WHERE project_id = $1 AND id = $2 RETURNING *;

-- name: DeletePoolAccount :execrows
-- Refuses (0 rows) an account under a live lease.
DELETE FROM pool_accounts
WHERE project_id = $1 AND id = $2 AND (lease_run_id IS NULL OR lease_expires_at <= now());

-- name: ListPoolAccounts :many
SELECT * FROM pool_accounts
WHERE project_id = sqlc.arg('project_id')
  AND (sqlc.narg('tag')::text IS NULL OR sqlc.narg('tag')::text = ANY (tags))
  AND (sqlc.narg('after_username')::text IS NULL OR username > sqlc.narg('after_username')::text)
ORDER BY username
LIMIT sqlc.arg('row_limit');

-- name: LeasePoolAccount :one
-- Gives one free account (never leased, released, or whose lease expired) to a scenario; concurrent
-- callers skip each other's candidates, so no account is leased twice.
UPDATE pool_accounts SET lease_run_id = sqlc.arg('run_id'), lease_scenario_id = sqlc.narg('scenario_id'),
    leased_at = now(), lease_expires_at = now() + make_interval(secs => sqlc.arg('ttl_seconds')::float8)
WHERE id = (
    SELECT a.id FROM pool_accounts a
    WHERE a.project_id = sqlc.arg('project_id')
      AND (a.lease_run_id IS NULL OR a.lease_expires_at <= now())
      AND (a.environment IS NULL OR sqlc.narg('environment')::text IS NULL OR a.environment = sqlc.narg('environment')::text)
      AND a.tags @> sqlc.arg('tags')::text[]
    ORDER BY a.leased_at NULLS FIRST, a.username
    LIMIT 1
    FOR UPDATE SKIP LOCKED)
RETURNING *;

-- name: RenewPoolLease :execrows
UPDATE pool_accounts SET lease_expires_at = now() + make_interval(secs => sqlc.arg('ttl_seconds')::float8)
WHERE id = sqlc.arg('id') AND lease_run_id = sqlc.arg('run_id');

-- name: ReleasePoolLease :execrows
UPDATE pool_accounts SET lease_run_id = NULL, lease_scenario_id = NULL, leased_at = NULL, lease_expires_at = NULL
WHERE id = $1 AND lease_run_id = $2;

-- name: ReleaseRunLeases :execrows
-- Releases every account a run holds (the run ended, or was found dead).
UPDATE pool_accounts SET lease_run_id = NULL, lease_scenario_id = NULL, leased_at = NULL, lease_expires_at = NULL
WHERE lease_run_id = $1;
