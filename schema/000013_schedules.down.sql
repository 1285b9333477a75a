UPDATE runs SET trigger = 'schedule' WHERE trigger = 'schedule_manual';
ALTER TABLE runs DROP CONSTRAINT runs_trigger_check;
ALTER TABLE runs ADD CONSTRAINT runs_trigger_check
    CHECK (trigger IN ('ui', 'api', 'schedule', 'process', 'integration', 'mcp', 'agent'));
DROP INDEX IF EXISTS runs_schedule_idx;
DROP TABLE IF EXISTS schedule_firings;
DROP TABLE IF EXISTS schedules;
