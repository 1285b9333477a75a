-- A project's scenario concurrency (settings.scenarioConcurrency, issue 31): how many scenarios of one
-- run execute at once. Absent means the worker's number of cores. The API refuses other values; the
-- constraint keeps any writer of projects.settings to the same bounds.
ALTER TABLE projects ADD CONSTRAINT projects_scenario_concurrency_check CHECK (
    NOT (settings ? 'scenarioConcurrency')
    OR (jsonb_typeof(settings -> 'scenarioConcurrency') = 'number'
        AND (settings ->> 'scenarioConcurrency')::numeric BETWEEN 1 AND 32
        AND (settings ->> 'scenarioConcurrency')::numeric = trunc((settings ->> 'scenarioConcurrency')::numeric)));
