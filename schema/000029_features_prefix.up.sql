-- The feature list filtered by a path prefix (GET /api/projects/{project}/features?prefix=, issue 31
-- item 3): ListFeatures' path LIKE prefix || '%' was answered by a sequential scan of the project's
-- features (5,000 rows read for 100 matches in the read benchmark): a btree index bounds a LIKE
-- prefix only under the "C" collation, and the unique index (project_id, path) has the database's
-- (C.UTF-8 or a linguistic one). The planner bounds a scan of this index by the pattern's fixed
-- part (path >= 'features/area7/' AND path < 'features/area70'), whatever the column's collation
-- (a LIKE matches bytes), then sorts the matches by path; without a prefix, or when most features
-- match, it still reads the unique index in order.
CREATE INDEX features_project_path_c_idx ON features (project_id, (path COLLATE "C"));
