DROP VIEW run_events;
CREATE TABLE run_events (
    run_id uuid        NOT NULL,
    seq    bigint      NOT NULL,
    at     timestamptz NOT NULL DEFAULT now(),
    type   text        NOT NULL,
    data   json        NOT NULL,
    PRIMARY KEY (run_id, seq)
);
INSERT INTO run_events (run_id, seq, at, type, data)
SELECT b.run_id, b.first_seq + e.n - 1, e.at, e.type, e.data
FROM run_event_batches b CROSS JOIN LATERAL unnest(b.ats, b.types, b.datas) WITH ORDINALITY AS e(at, type, data, n);
CREATE OR REPLACE FUNCTION run_events_delete_with_runs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM run_events e USING deleted_runs d WHERE e.run_id = d.id;
    RETURN NULL;
END
$$;
DROP TABLE run_event_batches;
