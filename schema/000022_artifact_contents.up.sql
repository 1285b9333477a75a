-- Small attachments of a run kept in the database (docs/runs.md, "Attachments"): a passed
-- attempt's trace manifest and any other attachment of at most 64 KiB is written with the batch
-- of its event instead of as a file of the blob store (a file, an fsync and a rename each, about
-- half of a 200-scenario run's CPU). Its artifacts row has blob_key '' and its content here; it is
-- removed with its row.
CREATE TABLE artifact_contents (
    artifact_id uuid  PRIMARY KEY REFERENCES artifacts (id) ON DELETE CASCADE,
    content     bytea NOT NULL
);
