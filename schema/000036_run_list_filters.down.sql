DROP INDEX IF EXISTS runs_project_trigger_idx;
DROP INDEX IF EXISTS runs_project_tags_idx;
DROP EXTENSION IF EXISTS btree_gin;
DROP EXTENSION IF EXISTS pg_trgm;
