-- The run list filtered by tags (issue 31 item 3; docs/benchmarks.md, read paths round 11). A tag
-- matches as a substring of the run's tag expression (ILIKE '%tag%'), which no btree answers: the
-- list read the project's runs newest first and filtered them, every run of the project for a tag
-- that none has (51 ms at 100,000 runs). This GIN index finds a project's runs whose tags contain
-- the pattern's trigrams; ListProjectRunsByTags reads it when the project's newest runs show the
-- tag to be rare. The project is the index's first column (btree_gin) so that a tag common in
-- another project does not fill the bitmap of one where it is rare; as text, so that only a
-- statement that asks for "project_id::text" reads it: with project_id itself the planner took
-- it for a cheap way to every run of a project (a bitmap, then a sort) in the other lists. Both
-- extensions ship with PostgreSQL (contrib) and are trusted: the database's owner may create them.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS btree_gin;
-- Without a pending list (fastupdate off): each new row version goes into the index at once. A
-- pending list is read by every scan and makes the planner, which counts its pages, read the
-- project's runs rather than the trigrams of a generic plan's patterns (every run of the project).
CREATE INDEX runs_project_tags_idx ON runs USING gin ((project_id::text), tags gin_trgm_ops) WITH (fastupdate = off);

-- The run list filtered by trigger goes to ListRuns, planned with its values: a trigger that few
-- or none of the project's runs have was read from every run of the project (a sequential scan,
-- 22–47 ms at 100,000 runs). With this index the plan reads that trigger's runs only, as
-- runs_project_status_idx and runs_project_branch_idx serve a status and a branch.
CREATE INDEX runs_project_trigger_idx ON runs (project_id, trigger, created_at DESC, id DESC);
