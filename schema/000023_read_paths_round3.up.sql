-- Read paths at 100,000 runs, round 3 (issue 31 item 3; docs/benchmarks.md). A project's quarantine
-- list is paged (open ones first, newest first): read in that order and stopped at the page, the
-- open ones (the list's export) the index's first range.
CREATE INDEX scenario_quarantines_list_idx ON scenario_quarantines (project_id, (released_at IS NULL) DESC, created_at DESC, id DESC);
-- The upcoming firings are read from the active schedules in order of their next firing (of every
-- project the caller sees, or of one), stopping once no later schedule can fire within the page.
CREATE INDEX schedules_next_fire_idx ON schedules (next_fire_at, id) WHERE status = 'active';
CREATE INDEX schedules_project_next_fire_idx ON schedules (project_id, next_fire_at, id) WHERE status = 'active';
