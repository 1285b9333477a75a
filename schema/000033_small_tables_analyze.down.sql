-- The statistics gathered stay (they describe the data as it was); only the thresholds go back to
-- the server's.
ALTER TABLE orgs RESET (autovacuum_analyze_threshold, autovacuum_analyze_scale_factor);
ALTER TABLE org_members RESET (autovacuum_analyze_threshold, autovacuum_analyze_scale_factor);
ALTER TABLE workspaces RESET (autovacuum_analyze_threshold, autovacuum_analyze_scale_factor);
ALTER TABLE workspace_members RESET (autovacuum_analyze_threshold, autovacuum_analyze_scale_factor);
ALTER TABLE projects RESET (autovacuum_analyze_threshold, autovacuum_analyze_scale_factor);
ALTER TABLE users RESET (autovacuum_analyze_threshold, autovacuum_analyze_scale_factor);
