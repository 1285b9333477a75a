-- Ingest of externally produced results (JUnit XML, Cucumber JSON, Cucumber Messages). One row per
-- document ingested into a run: the idempotency key (the Idempotency-Key header, or the SHA-256 of
-- the document) makes a repeated ingest answer the first result without changing anything.
CREATE TABLE run_ingests (
    run_id          uuid        NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idempotency_key text        NOT NULL,
    sha256          text        NOT NULL,
    format          text        NOT NULL CHECK (format IN ('junit', 'cucumber-json', 'cucumber-messages')),
    artifact_id     uuid        REFERENCES artifacts (id) ON DELETE SET NULL, -- the document itself
    scenarios       integer     NOT NULL,
    result          jsonb       NOT NULL, -- the API's IngestResult as first answered
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, idempotency_key)
);
