-- Small attachments of a run kept in the database (docs/runs.md, "Attachments"): a passed
-- attempt's trace manifest and any other attachment of at most 64 KiB is written with the batch
-- of its event instead of as a file of the blob store (a file, an fsync and a rename each, about
-- half of a 200-scenario run's CPU). Its artifacts row has blob_key '' and its content here; it is
-- removed with its row.
CREATE TABLE artifact_contents (
    artifact_id uuid  PRIMARY KEY REFERENCES artifacts (id) ON DELETE CASCADE,
    content     bytea NOT NULL
);

-- A run's events without a foreign key to runs: its check looked the run's row up and locked it
-- once per inserted event (about 40 % of a 2,000-event batch's statement). Events are inserted
-- only by WriteRunBatch, and only when the same statement updated the run's row (so never for a
-- run that is gone, and a delete of the run waits for the batch); they are deleted with their runs
-- by this statement trigger, as the foreign key's ON DELETE CASCADE did.
ALTER TABLE run_events DROP CONSTRAINT run_events_run_id_fkey;
CREATE FUNCTION run_events_delete_with_runs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM run_events e USING deleted_runs d WHERE e.run_id = d.id;
    RETURN NULL;
END
$$;
CREATE TRIGGER runs_delete_events AFTER DELETE ON runs
    REFERENCING OLD TABLE AS deleted_runs FOR EACH STATEMENT EXECUTE FUNCTION run_events_delete_with_runs();

-- The quarantine trigger of run_scenarios (000010) called its function for every inserted row and
-- every status change, to return at once unless the status is final: a plpgsql call per row of a
-- run's 200-row insert (status 'unknown') and per scenario result. The same test as a WHEN clause
-- costs no call.
DROP TRIGGER run_scenarios_quarantine ON run_scenarios;
CREATE TRIGGER run_scenarios_quarantine AFTER INSERT OR UPDATE OF status ON run_scenarios
    FOR EACH ROW WHEN (NEW.status IN ('passed', 'failed', 'undefined', 'ambiguous'))
    EXECUTE FUNCTION stats_quarantine_result();
