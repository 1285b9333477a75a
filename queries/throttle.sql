-- name: CountLoginAttempt :one
-- Counts an attempt for key before its password is checked. One statement, so concurrent attempts
-- each see their own count: beyond sqlc.arg('max_attempts') in a window of
-- sqlc.arg('window_seconds'), the key is locked for sqlc.arg('lock_seconds'). An ended lock or
-- window starts a fresh count.
INSERT INTO login_failures AS lf (key, failures, window_start)
VALUES (sqlc.arg('key'), 1, now())
ON CONFLICT (key) DO UPDATE SET
    failures = CASE
        WHEN (lf.locked_until IS NOT NULL AND lf.locked_until <= now())
          OR (lf.locked_until IS NULL AND lf.window_start <= now() - make_interval(secs => sqlc.arg('window_seconds')::int))
        THEN 1 ELSE lf.failures + 1 END,
    window_start = CASE
        WHEN (lf.locked_until IS NOT NULL AND lf.locked_until <= now())
          OR (lf.locked_until IS NULL AND lf.window_start <= now() - make_interval(secs => sqlc.arg('window_seconds')::int))
        THEN now() ELSE lf.window_start END,
    locked_until = CASE
        WHEN (lf.locked_until IS NOT NULL AND lf.locked_until <= now())
          OR (lf.locked_until IS NULL AND lf.window_start <= now() - make_interval(secs => sqlc.arg('window_seconds')::int))
        THEN NULL
        WHEN lf.locked_until IS NOT NULL THEN lf.locked_until
        WHEN lf.failures + 1 > sqlc.arg('max_attempts')::int THEN now() + make_interval(secs => sqlc.arg('lock_seconds')::int)
        ELSE NULL END
RETURNING failures, locked_until;

-- name: ForgiveLoginAttempt :exec
-- Takes back an attempt counted by CountLoginAttempt that turned out not to be a failure.
UPDATE login_failures SET failures = greatest(failures - 1, 0) WHERE key = $1 AND locked_until IS NULL;

-- name: ClearLoginFailures :exec
DELETE FROM login_failures WHERE key = $1;

-- name: PruneLoginFailures :execrows
-- Rows whose window and lock have both ended count nothing any more (the next failure of the key
-- starts a fresh count either way): the periodic clean-up deletes them.
DELETE FROM login_failures
WHERE window_start <= now() - make_interval(secs => sqlc.arg('window_seconds')::int)
  AND (locked_until IS NULL OR locked_until <= now());
