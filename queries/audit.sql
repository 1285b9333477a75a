-- name: InsertAuditEntry :exec
INSERT INTO audit_entries (actor_kind, actor_id, actor_name, operation, method, path, status, outcome,
                           target_kind, target_id, target_name, client_addr, request_id, detail)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14);

-- name: ListAuditEntries :many
-- Keyset pagination, newest first: the cursor is the (at, id) of the last entry of the previous page.
-- Each filter has an index in that order (000001, 000022): an actor's, an operation's, a target's
-- entries and the ones that did not succeed are read in order and stop at the page, however rare.
SELECT * FROM audit_entries
WHERE (sqlc.narg('before_at')::timestamptz IS NULL
       OR (at, id) < (sqlc.narg('before_at')::timestamptz, sqlc.narg('before_id')::uuid))
  AND (sqlc.narg('actor_id')::uuid IS NULL OR actor_id = sqlc.narg('actor_id')::uuid)
  AND (sqlc.narg('operation')::text IS NULL OR operation = sqlc.narg('operation')::text)
  AND (sqlc.narg('target_kind')::text IS NULL OR target_kind = sqlc.narg('target_kind')::text)
  AND (sqlc.narg('target_id')::text IS NULL OR target_id = sqlc.narg('target_id')::text)
  AND (sqlc.narg('outcome')::text IS NULL OR outcome = sqlc.narg('outcome')::text)
  AND (sqlc.narg('since')::timestamptz IS NULL OR at >= sqlc.narg('since')::timestamptz)
  AND (sqlc.narg('until')::timestamptz IS NULL OR at < sqlc.narg('until')::timestamptz)
ORDER BY at DESC, id DESC
LIMIT sqlc.arg('row_limit');

-- name: CountAuditEntries :one
SELECT count(*) FROM audit_entries;
