DROP INDEX IF EXISTS schedules_list_idx;
DROP INDEX IF EXISTS schedules_project_list_idx;
DROP INDEX IF EXISTS schedules_project_status_list_idx;
