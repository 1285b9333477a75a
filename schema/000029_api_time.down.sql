DROP FUNCTION api_time(timestamptz);
