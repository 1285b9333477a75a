DROP INDEX IF EXISTS audit_entries_outcome_idx;
DROP INDEX IF EXISTS audit_entries_target_idx;
DROP INDEX IF EXISTS audit_entries_operation_idx;
DROP INDEX IF EXISTS schedules_project_next_fire_idx;
DROP INDEX IF EXISTS schedules_next_fire_idx;
DROP INDEX IF EXISTS scenario_quarantines_list_idx;
