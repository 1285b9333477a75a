-- A run's events as json, not jsonb (issue 31, runner round 5): nothing queries into them — they are
-- written by the run's sink (encoded by the server) and read back whole, for the live feed, the
-- streams and a trace's logs — so jsonb's conversion on every insert (2–4 ms of PostgreSQL's CPU
-- for a run's 2,000 events) and its serialisation on every read bought nothing. json still checks
-- that each is valid JSON, and keeps the text as written — also an escaped NUL (\u0000, a log line's),
-- which jsonb refused: the whole batch failed, and every batch after it.
ALTER TABLE run_events ALTER COLUMN data TYPE json USING data::json;
