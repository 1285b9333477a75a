DROP INDEX IF EXISTS runs_stats_idx;
ALTER TABLE run_scenarios DROP COLUMN IF EXISTS heals, DROP COLUMN IF EXISTS failure_signature, DROP COLUMN IF EXISTS identity;
DROP FUNCTION IF EXISTS stats_locator(text);
DROP FUNCTION IF EXISTS stats_signature(jsonb, jsonb);
DROP FUNCTION IF EXISTS stats_failing_step(jsonb);
DROP FUNCTION IF EXISTS stats_mask(text);
