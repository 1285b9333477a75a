CREATE OR REPLACE FUNCTION stats_quarantine_updated() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    FOR r IN
        SELECT q.id AS quarantine_id, n.status, n.run_id
        FROM new_rows n
        JOIN old_rows o ON o.id = n.id
        JOIN runs ru ON ru.id = n.run_id
        JOIN scenario_quarantines q ON q.project_id = ru.project_id AND q.identity = n.identity AND q.released_at IS NULL
        WHERE n.status IN ('passed', 'failed', 'undefined', 'ambiguous')
          AND (o.status, o.error, o.finished_at, o.attempts, o.duration_ms) IS DISTINCT FROM
              (n.status, n.error, n.finished_at, n.attempts, n.duration_ms)
        ORDER BY n.finished_at NULLS LAST, n.run_id, n.position, n.id
    LOOP
        PERFORM stats_quarantine_count(r.quarantine_id, r.status, r.run_id);
    END LOOP;
    RETURN NULL;
END
$$;
