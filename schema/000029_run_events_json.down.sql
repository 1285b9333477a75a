ALTER TABLE run_events ALTER COLUMN data TYPE jsonb USING data::jsonb;
