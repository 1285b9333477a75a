-- The artifacts whose content is in the database cannot be read without it.
DELETE FROM artifacts WHERE blob_key = '';
DROP TABLE artifact_contents;
