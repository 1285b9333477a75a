ALTER TABLE projects DROP CONSTRAINT IF EXISTS projects_scenario_concurrency_check;
