-- The small tables every list joins or probes (issue 31 item 3; docs/deploy.md "Table statistics").
-- autovacuum analyses a table after 50 + 10 % of its rows changed, so an installation with 30
-- projects and 40 users may never have statistics for them (pg_class.reltuples -1): the planner
-- then assumes ten pages of rows and, for a member's schedule list without a project, read every
-- schedule and sorted them instead of reading schedules_list_idx in order (docs/benchmarks.md,
-- "the small tables analysed"). Analysing a table of a few pages costs milliseconds, so these are
-- analysed after 5 changes plus 5 % of their rows, and once here.
ALTER TABLE orgs SET (autovacuum_analyze_threshold = 5, autovacuum_analyze_scale_factor = 0.05);
ALTER TABLE org_members SET (autovacuum_analyze_threshold = 5, autovacuum_analyze_scale_factor = 0.05);
ALTER TABLE workspaces SET (autovacuum_analyze_threshold = 5, autovacuum_analyze_scale_factor = 0.05);
ALTER TABLE workspace_members SET (autovacuum_analyze_threshold = 5, autovacuum_analyze_scale_factor = 0.05);
ALTER TABLE projects SET (autovacuum_analyze_threshold = 5, autovacuum_analyze_scale_factor = 0.05);
ALTER TABLE users SET (autovacuum_analyze_threshold = 5, autovacuum_analyze_scale_factor = 0.05);
ANALYZE orgs, org_members, workspaces, workspace_members, projects, users;
