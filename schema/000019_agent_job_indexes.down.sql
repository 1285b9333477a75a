DROP INDEX IF EXISTS agent_jobs_project_kind_idx;
DROP INDEX IF EXISTS agent_jobs_project_status_idx;
