-- name: CreateSession :one
INSERT INTO sessions (secret_hash, user_id, user_agent, client_addr, expires_at)
VALUES ($1, $2, $3, $4, $5)
RETURNING *;

-- name: GetSessionBySecret :one
-- The session and its user, when the session is live.
SELECT sqlc.embed(sessions), sqlc.embed(users)
FROM sessions JOIN users ON users.id = sessions.user_id
WHERE sessions.secret_hash = $1 AND sessions.expires_at > now() AND NOT users.disabled;

-- name: TouchSession :exec
-- Slides the session's expiry forward.
UPDATE sessions SET last_seen_at = now(), expires_at = $2 WHERE id = $1;

-- name: ListUserSessions :many
SELECT * FROM sessions WHERE user_id = $1 AND expires_at > now() ORDER BY created_at DESC;

-- name: DeleteUserSession :execrows
DELETE FROM sessions WHERE id = $1 AND user_id = $2;

-- name: DeleteOtherSessions :execrows
DELETE FROM sessions WHERE user_id = $1 AND id <> $2;

-- name: DeleteSession :exec
DELETE FROM sessions WHERE id = $1;

-- name: DeleteExpiredSessions :execrows
DELETE FROM sessions WHERE expires_at <= now();
