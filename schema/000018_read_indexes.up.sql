-- Read paths at 100,000 runs (issue 31 item 3; docs/benchmarks.md, "Read paths at 100,000 runs").
-- The run list filtered by branch (one of many), newest first, reads that branch's runs only
-- instead of walking the project's whole index (with runs_project_status_idx of 000012 for
-- project + status).
CREATE INDEX runs_project_branch_idx ON runs (project_id, branch, created_at DESC, id DESC);
