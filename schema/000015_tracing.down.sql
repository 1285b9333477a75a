DROP INDEX IF EXISTS artifacts_trace_manifest_idx;
ALTER TABLE projects DROP CONSTRAINT IF EXISTS projects_settings_tracing_check;
