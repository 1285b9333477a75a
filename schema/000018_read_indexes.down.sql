DROP INDEX IF EXISTS runs_project_branch_idx;
