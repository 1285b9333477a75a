-- Read paths at 100,000 runs, round 3 (issue 31 item 3; docs/benchmarks.md). A project's quarantine
-- list is paged (open ones first, newest first): read in that order and stopped at the page, the
-- open ones (the list's export) the index's first range.
CREATE INDEX scenario_quarantines_list_idx ON scenario_quarantines (project_id, (released_at IS NULL) DESC, created_at DESC, id DESC);
-- The upcoming firings are read from the active schedules in order of their next firing (of every
-- project the caller sees, or of one), stopping once no later schedule can fire within the page.
CREATE INDEX schedules_next_fire_idx ON schedules (next_fire_at, id) WHERE status = 'active';
CREATE INDEX schedules_project_next_fire_idx ON schedules (project_id, next_fire_at, id) WHERE status = 'active';
-- The audit log filtered by operation, by target, or by an outcome other than success (denied and
-- failed requests are rare: walking every entry in time order to fill a page of them read the
-- whole log), newest first as the list pages it.
CREATE INDEX audit_entries_operation_idx ON audit_entries (operation, at DESC, id DESC);
CREATE INDEX audit_entries_target_idx ON audit_entries (target_kind, target_id, at DESC, id DESC);
CREATE INDEX audit_entries_outcome_idx ON audit_entries (outcome, at DESC, id DESC) WHERE outcome <> 'success';
