-- name: RunHasHeals :one
-- Whether any step of the run recorded a selector heal.
SELECT EXISTS (SELECT 1 FROM run_scenarios WHERE run_id = $1 AND heals > 0)::boolean;

-- name: LockProjectAutoHeal :exec
-- Serialises the automatic heal jobs of one project until the transaction ends.
SELECT pg_advisory_xact_lock(hashtextextended('agents:auto-heal:' || sqlc.arg('project_id')::uuid::text, 0));

-- name: PendingHealJobExists :one
SELECT EXISTS (SELECT 1 FROM agent_jobs WHERE project_id = $1 AND kind = 'heal' AND status = 'queued')::boolean;
