ALTER TABLE run_scenarios DROP COLUMN IF EXISTS dataset;
