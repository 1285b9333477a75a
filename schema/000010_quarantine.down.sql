DROP TRIGGER IF EXISTS runs_quarantine ON runs;
DROP FUNCTION IF EXISTS stats_quarantine_run();
DROP TRIGGER IF EXISTS run_scenarios_quarantine ON run_scenarios;
DROP FUNCTION IF EXISTS stats_quarantine_result();
DROP TABLE IF EXISTS scenario_quarantines;
