DROP TABLE IF EXISTS locator_alternatives;
DROP TABLE IF EXISTS artifacts;
DROP TABLE IF EXISTS run_events;
DROP TABLE IF EXISTS run_scenarios;
DROP TABLE IF EXISTS runs;
