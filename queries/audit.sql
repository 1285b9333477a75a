-- name: InsertAuditEntry :one
INSERT INTO audit_entries (actor_id, actor_label, action, target_type, target_id, request_id, details)
VALUES ($1, $2, $3, $4, $5, $6, $7)
RETURNING *;

-- name: ListAuditEntries :many
-- Keyset pagination, newest first: the cursor is the (at, id) of the last entry of the previous page.
SELECT * FROM audit_entries
WHERE (sqlc.narg('before_at')::timestamptz IS NULL
       OR (at, id) < (sqlc.narg('before_at')::timestamptz, sqlc.narg('before_id')::uuid))
  AND (sqlc.narg('actor_id')::uuid IS NULL OR actor_id = sqlc.narg('actor_id')::uuid)
  AND (sqlc.narg('action')::text IS NULL OR action = sqlc.narg('action')::text)
  AND (sqlc.narg('since')::timestamptz IS NULL OR at >= sqlc.narg('since')::timestamptz)
ORDER BY at DESC, id DESC
LIMIT sqlc.arg('row_limit');
