-- The statement trigger of run_scenarios' updates (000023) joined the statement's new rows with its
-- old rows first: the planner takes a transition table for one row, so it compared every new row
-- with every old one (a runner batch of 200 results: 40,000 comparisons, 5–6 ms), before looking
-- for an open quarantine. It now returns at once when no run of the statement has an open
-- quarantine in its project, and otherwise matches the old rows only to the results of quarantined
-- identities (docs/benchmarks.md, "Runner: round 4").
CREATE OR REPLACE FUNCTION stats_quarantine_updated() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    IF NOT EXISTS (
        SELECT 1 FROM scenario_quarantines q
        WHERE q.released_at IS NULL
          AND q.project_id IN (SELECT ru.project_id FROM runs ru WHERE ru.id IN (SELECT n.run_id FROM new_rows n))
    ) THEN
        RETURN NULL;
    END IF;
    FOR r IN
        WITH held AS MATERIALIZED (
            SELECT q.id AS quarantine_id, n.id, n.status, n.error, n.finished_at, n.attempts, n.duration_ms, n.run_id, n.position
            FROM new_rows n
            JOIN runs ru ON ru.id = n.run_id
            JOIN scenario_quarantines q ON q.project_id = ru.project_id AND q.identity = n.identity AND q.released_at IS NULL
            WHERE n.status IN ('passed', 'failed', 'undefined', 'ambiguous')
        )
        SELECT h.quarantine_id, h.status, h.run_id
        FROM held h
        JOIN old_rows o ON o.id = h.id
        WHERE (o.status, o.error, o.finished_at, o.attempts, o.duration_ms) IS DISTINCT FROM
              (h.status, h.error, h.finished_at, h.attempts, h.duration_ms)
        ORDER BY h.finished_at NULLS LAST, h.run_id, h.position, h.id
    LOOP
        PERFORM stats_quarantine_count(r.quarantine_id, r.status, r.run_id);
    END LOOP;
    RETURN NULL;
END
$$;
