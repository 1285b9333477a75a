DROP TRIGGER run_scenarios_quarantine ON run_scenarios;
CREATE TRIGGER run_scenarios_quarantine AFTER INSERT OR UPDATE OF status ON run_scenarios
    FOR EACH ROW EXECUTE FUNCTION stats_quarantine_result();
DROP TRIGGER runs_delete_events ON runs;
DROP FUNCTION run_events_delete_with_runs();
DELETE FROM run_events e WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = e.run_id);
ALTER TABLE run_events ADD CONSTRAINT run_events_run_id_fkey FOREIGN KEY (run_id) REFERENCES runs (id) ON DELETE CASCADE;
-- The artifacts whose content is in the database cannot be read without it.
DELETE FROM artifacts WHERE blob_key = '';
DROP TABLE artifact_contents;
