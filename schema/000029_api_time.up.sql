-- A timestamp as the API writes it (issue 31 item 3: list items built as JSON by the statement that
-- reads them): RFC 3339 in UTC with the fraction's trailing zeros dropped and no fraction when it is
-- zero — the bytes of Go's time.RFC3339Nano for a UTC time at PostgreSQL's microsecond precision
-- (TestAPITimeMatchesGo). A SQL function of one expression, so the planner inlines it.
CREATE FUNCTION api_time(t timestamptz) RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')
        || rtrim(rtrim(to_char(t AT TIME ZONE 'UTC', '.US'), '0'), '.') || 'Z'
$$;
