-- A per-project statistics version: the flaky answer is cached per project and version
-- (docs/stats.md, "Caching"). Every write of the rows that answer reads — stats_scenario_days,
-- stats_failure_days, and a project's slug or workspace — gives the project a new version in the
-- same transaction. The triggers are on the tables themselves, so every writer (the run rollup,
-- the day recompute, a rebuild) is covered. Versions come from one sequence, so a project never
-- returns to a version it had and no two projects share one.
CREATE SEQUENCE stats_version_seq;

CREATE TABLE stats_versions (
    project_id uuid   PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
    version    bigint NOT NULL
);

-- stats_version_bump gives every project of the changed rows a new version. Projects being
-- deleted (the rows go by cascade) are skipped: their version row goes with them.
CREATE FUNCTION stats_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO stats_versions AS v (project_id, version)
    SELECT c.project_id, nextval('stats_version_seq') FROM (SELECT DISTINCT project_id FROM changed) c
    WHERE EXISTS (SELECT 1 FROM projects p WHERE p.id = c.project_id)
    ORDER BY c.project_id
    ON CONFLICT (project_id) DO UPDATE SET version = EXCLUDED.version;
    RETURN NULL;
END $$;

-- Transition tables allow one event per trigger.
CREATE TRIGGER stats_scenario_days_version_ins AFTER INSERT ON stats_scenario_days
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION stats_version_bump();
CREATE TRIGGER stats_scenario_days_version_upd AFTER UPDATE ON stats_scenario_days
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION stats_version_bump();
CREATE TRIGGER stats_scenario_days_version_del AFTER DELETE ON stats_scenario_days
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION stats_version_bump();
CREATE TRIGGER stats_failure_days_version_ins AFTER INSERT ON stats_failure_days
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION stats_version_bump();
CREATE TRIGGER stats_failure_days_version_upd AFTER UPDATE ON stats_failure_days
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION stats_version_bump();
CREATE TRIGGER stats_failure_days_version_del AFTER DELETE ON stats_failure_days
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION stats_version_bump();

-- The answer names the project by slug and is bounded by its workspace.
CREATE FUNCTION stats_version_bump_project() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO stats_versions AS v (project_id, version) VALUES (NEW.id, nextval('stats_version_seq'))
    ON CONFLICT (project_id) DO UPDATE SET version = EXCLUDED.version;
    RETURN NULL;
END $$;

CREATE TRIGGER projects_stats_version AFTER UPDATE OF slug, workspace_id ON projects
    FOR EACH ROW WHEN (OLD.slug IS DISTINCT FROM NEW.slug OR OLD.workspace_id IS DISTINCT FROM NEW.workspace_id)
    EXECUTE FUNCTION stats_version_bump_project();
