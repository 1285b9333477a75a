-- The proposals of a job in their order (issue 31 item 3): the job list and a job's detail read
-- each job's proposals' ids ordered by (created_at, id) (ListAgentJobs, GetAgentJob), which on
-- proposals_job_idx (job_id) was an index scan and a sort per job of the page (51 sorts a page).
-- With the order's columns in the index it is an index-only scan in order, no sort
-- (docs/benchmarks.md, read paths round 8). Look-ups by job_id alone use its prefix.
DROP INDEX proposals_job_idx;
CREATE INDEX proposals_job_idx ON proposals (job_id, created_at, id);
