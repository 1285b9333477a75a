-- name: CreateUser :one
INSERT INTO users (email, display_name, password_hash, instance_admin)
VALUES ($1, $2, $3, $4)
RETURNING *;

-- name: GetUser :one
SELECT * FROM users WHERE id = $1;

-- name: GetUserByEmail :one
SELECT * FROM users WHERE lower(email) = lower(sqlc.arg('email'));

-- name: ListUsers :many
SELECT * FROM users
WHERE (sqlc.narg('after_email')::text IS NULL OR lower(email) > lower(sqlc.narg('after_email')::text))
  AND (sqlc.narg('query')::text IS NULL
       OR email ILIKE '%' || sqlc.narg('query')::text || '%'
       OR display_name ILIKE '%' || sqlc.narg('query')::text || '%')
  AND (sqlc.narg('disabled')::boolean IS NULL OR disabled = sqlc.narg('disabled')::boolean)
ORDER BY lower(email)
LIMIT sqlc.arg('row_limit');

-- name: UpdateUser :one
UPDATE users SET
    email          = coalesce(sqlc.narg('email'), email),
    display_name   = coalesce(sqlc.narg('display_name'), display_name),
    instance_admin = coalesce(sqlc.narg('instance_admin'), instance_admin),
    disabled       = coalesce(sqlc.narg('disabled'), disabled),
    updated_at     = now()
WHERE id = sqlc.arg('id')
RETURNING *;

-- name: RecordLogin :exec
UPDATE users SET last_login_at = now() WHERE id = $1;

-- name: SetUserPassword :exec
UPDATE users SET password_hash = $2, updated_at = now() WHERE id = $1;

-- name: CountInstanceAdmins :one
SELECT count(*) FROM users WHERE instance_admin AND NOT disabled;

-- name: GetSetup :one
SELECT * FROM instance_setup;

-- name: CompleteSetup :execrows
INSERT INTO instance_setup (admin_id) VALUES ($1) ON CONFLICT DO NOTHING;

-- name: DeleteSessionsOfUser :exec
DELETE FROM sessions WHERE user_id = $1;

-- name: LockInstanceAdmins :exec
-- Serialises the transactions that may take away an instance admin (demote, disable), so that two
-- concurrent ones cannot each see the other's admin and leave none.
SELECT pg_advisory_xact_lock(7301, 1);
