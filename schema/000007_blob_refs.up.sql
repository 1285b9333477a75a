-- The blob store is shared and content-addressed: datasets, artifacts and visual baselines may
-- hold the same key. Deleting a blob first counts its references in all three, by these indexes.
CREATE INDEX IF NOT EXISTS datasets_blob_idx ON datasets (blob_key);
CREATE INDEX IF NOT EXISTS artifacts_blob_idx ON artifacts (blob_key);
CREATE INDEX IF NOT EXISTS visual_baselines_blob_idx ON visual_baselines (blob_key);
