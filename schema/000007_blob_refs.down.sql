DROP INDEX IF EXISTS visual_baselines_blob_idx;
DROP INDEX IF EXISTS artifacts_blob_idx;
DROP INDEX IF EXISTS datasets_blob_idx;
