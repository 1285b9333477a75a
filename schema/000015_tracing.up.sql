-- Tracing (docs/reports.md, "Tracing"): a project's settings name what the runner records
-- (off, on_failure — the default when absent —, always); the trace of a scenario attempt is a
-- manifest artifact (trace-a<attempt>.json, no step) beside its screenshots and DOM snapshots,
-- and the trace diff looks the manifests of a run's scenario up by this index.
ALTER TABLE projects ADD CONSTRAINT projects_settings_tracing_check
    CHECK (settings->>'tracing' IS NULL OR settings->>'tracing' IN ('off', 'on_failure', 'always'));
CREATE INDEX artifacts_trace_manifest_idx ON artifacts (run_id, scenario_key)
    WHERE step_index IS NULL AND name LIKE 'trace-a%.json';
