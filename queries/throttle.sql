-- name: GetLoginLock :one
SELECT locked_until FROM login_failures WHERE key = $1 AND locked_until > now();

-- name: RecordLoginFailure :one
-- Counts a failure in a window of sqlc.arg('window_seconds'); at sqlc.arg('max_failures') the key is
-- locked for sqlc.arg('lock_seconds').
INSERT INTO login_failures AS lf (key, failures, window_start)
VALUES (sqlc.arg('key'), 1, now())
ON CONFLICT (key) DO UPDATE SET
    failures = CASE WHEN lf.window_start < now() - make_interval(secs => sqlc.arg('window_seconds')::int)
                    THEN 1 ELSE lf.failures + 1 END,
    window_start = CASE WHEN lf.window_start < now() - make_interval(secs => sqlc.arg('window_seconds')::int)
                    THEN now() ELSE lf.window_start END
RETURNING failures;

-- name: LockLogin :exec
UPDATE login_failures SET locked_until = now() + make_interval(secs => sqlc.arg('lock_seconds')::int)
WHERE key = sqlc.arg('key');

-- name: ClearLoginFailures :exec
DELETE FROM login_failures WHERE key = $1;
