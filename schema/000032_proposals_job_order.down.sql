DROP INDEX proposals_job_idx;
CREATE INDEX proposals_job_idx ON proposals (job_id);
