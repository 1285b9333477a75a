-- Read paths at 100,000 runs, round 8 (issue 31; docs/benchmarks.md "Read paths, round 8"). The
-- schedule list (ListSchedules) pages a project's schedules oldest first (created_at, id), with or
-- without a status: it was a Seq Scan of every schedule and a top-N sort (1,800 of 2,000 removed
-- by the filter for the paused ones). Read in that order from an index and stopped at the page:
-- a project's schedules of one status, a project's schedules, and every project's (the instance
-- administrator's list, and a user's across their workspaces).
CREATE INDEX schedules_project_status_list_idx ON schedules (project_id, status, created_at, id);
CREATE INDEX schedules_project_list_idx ON schedules (project_id, created_at, id);
CREATE INDEX schedules_list_idx ON schedules (created_at, id);
