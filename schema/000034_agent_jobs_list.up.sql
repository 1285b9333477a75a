-- The job list without a project (ListAgentJobs: the instance administrator's list, and a user's
-- across their workspaces) pages every project's jobs newest first (created_at DESC, id DESC):
-- with only the per-project indexes it was a Seq Scan of every job and a top-N sort (20,000 jobs
-- on the read-path database, docs/benchmarks.md "the small tables analysed"). Read in that order
-- from an index and stopped at the page.
CREATE INDEX agent_jobs_list_idx ON agent_jobs (created_at DESC, id DESC);
