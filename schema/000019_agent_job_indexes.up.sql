-- Read paths at 100,000 runs, round 2 (issue 31 item 3; docs/benchmarks.md). Agent jobs listed by
-- project and status or kind, newest first, read the jobs of that status or kind only instead of
-- walking agent_jobs_project_idx and filtering every job of the project.
CREATE INDEX agent_jobs_project_status_idx ON agent_jobs (project_id, status, created_at DESC, id DESC);
CREATE INDEX agent_jobs_project_kind_idx ON agent_jobs (project_id, kind, created_at DESC, id DESC);
