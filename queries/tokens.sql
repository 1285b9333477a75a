-- name: CreateToken :one
INSERT INTO api_tokens (user_id, name, prefix, secret_hash, scopes, expires_at)
VALUES ($1, $2, $3, $4, $5, $6)
RETURNING *;

-- name: GetTokenBySecret :one
-- The token and its user, when the token is live.
SELECT sqlc.embed(api_tokens), sqlc.embed(users)
FROM api_tokens JOIN users ON users.id = api_tokens.user_id
WHERE api_tokens.secret_hash = $1 AND api_tokens.revoked_at IS NULL
  AND (api_tokens.expires_at IS NULL OR api_tokens.expires_at > now()) AND NOT users.disabled;

-- name: TouchToken :exec
UPDATE api_tokens SET last_used_at = now() WHERE id = $1;

-- name: ListTokens :many
SELECT * FROM api_tokens
WHERE revoked_at IS NULL
  AND (sqlc.narg('user_id')::uuid IS NULL OR user_id = sqlc.narg('user_id')::uuid)
  AND (sqlc.narg('before_created')::timestamptz IS NULL
       OR (created_at, id) < (sqlc.narg('before_created')::timestamptz, sqlc.narg('before_id')::uuid))
ORDER BY created_at DESC, id DESC
LIMIT sqlc.arg('row_limit');

-- name: GetToken :one
SELECT * FROM api_tokens WHERE id = $1 AND revoked_at IS NULL;

-- name: RevokeToken :execrows
UPDATE api_tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL;

-- name: RevokeUserTokens :execrows
-- Revokes every live token of a user (a password change does).
UPDATE api_tokens SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL;
