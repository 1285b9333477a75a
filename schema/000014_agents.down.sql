DROP TABLE IF EXISTS agent_llm_config;
DROP VIEW IF EXISTS inbox_items;
DELETE FROM audit_entries WHERE actor_kind = 'agent';
ALTER TABLE audit_entries DROP CONSTRAINT audit_entries_actor_kind_check,
    ADD CONSTRAINT audit_entries_actor_kind_check CHECK (actor_kind IN ('user', 'token', 'anonymous', 'system'));
DROP TABLE IF EXISTS visual_check_rejections;
DROP TABLE IF EXISTS run_feature_overrides;
DROP TABLE IF EXISTS proposals;
DROP TABLE IF EXISTS agent_job_events;
DROP TABLE IF EXISTS agent_jobs;
