DROP INDEX IF EXISTS agent_jobs_list_idx;
