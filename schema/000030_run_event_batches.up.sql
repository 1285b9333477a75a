-- A run's events stored by batch (issue 31, runner round 6; docs/runs.md "Event batches"): one row
-- per batch of the run's sink, holding the batch's events in arrays, instead of one row per event.
-- A run of 200 scenarios records about 2,000 events in 4 to 6 batches: each event's row — its heap
-- tuple, its primary key entry and their WAL — was most of PostgreSQL's work for the run's events
-- (3.8 ms of a backend's CPU for 500 events as rows, 0.8 ms as one row of arrays). A batch's
-- events have consecutive sequence numbers (they are given in order under the sink's lock, and a
-- batch holds all of them from its first to its last), so first_seq and the position in the arrays
-- number them. The view run_events shows them one row per event, as the table did; the readers
-- (ListRunEvents, ListRunLogEvents) read the batches whose last_seq is after theirs.
CREATE TABLE run_event_batches (
    run_id    uuid          NOT NULL,
    last_seq  bigint        NOT NULL,
    first_seq bigint        NOT NULL,
    ats       timestamptz[] NOT NULL,
    types     text[]        NOT NULL,
    datas     json[]        NOT NULL, -- each the API's RunEvent, as the sink encoded it
    PRIMARY KEY (run_id, last_seq),
    CHECK (first_seq >= 1 AND cardinality(ats) = last_seq - first_seq + 1
           AND cardinality(types) = cardinality(ats) AND cardinality(datas) = cardinality(ats))
);

-- A batch's arrays (a few hundred bytes an event) are compressed when the row is stored out of
-- line: lz4 where the server has it (much cheaper than pglz for about the same size here).
DO $$
BEGIN
    EXECUTE 'ALTER TABLE run_event_batches ALTER COLUMN datas SET COMPRESSION lz4, '
            'ALTER COLUMN types SET COMPRESSION lz4, ALTER COLUMN ats SET COMPRESSION lz4';
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value OR syntax_error THEN
    NULL; -- a server built without lz4 keeps its default
END $$;

-- The stored events, by runs of consecutive sequence numbers of at most 1,000 events.
INSERT INTO run_event_batches (run_id, last_seq, first_seq, ats, types, datas)
SELECT run_id, max(seq), min(seq), array_agg(at ORDER BY seq), array_agg(type ORDER BY seq), array_agg(data ORDER BY seq)
FROM (SELECT e.*, seq - row_number() OVER w AS island, (row_number() OVER w - 1) / 1000 AS chunk
      FROM run_events e WINDOW w AS (PARTITION BY run_id ORDER BY seq)) x
GROUP BY run_id, island, chunk;

DROP TABLE run_events;

-- One row per event, as the table had (for reading by hand and for the tests).
CREATE VIEW run_events AS
SELECT b.run_id, (b.first_seq + e.n - 1)::bigint AS seq, e.at::timestamptz AS at, e.type::text AS type, e.data::json AS data
FROM run_event_batches b
CROSS JOIN LATERAL unnest(b.ats, b.types, b.datas) WITH ORDINALITY AS e(at, type, data, n);

-- A deleted run's events go with it (000021).
CREATE OR REPLACE FUNCTION run_events_delete_with_runs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM run_event_batches e USING deleted_runs d WHERE e.run_id = d.id;
    RETURN NULL;
END
$$;
