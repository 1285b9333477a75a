DROP TABLE features;
DROP TABLE integrations;
DROP TABLE processes;
DROP TABLE pool_accounts;
DROP TABLE datasets;
DROP TABLE environments;
ALTER TABLE projects DROP COLUMN settings;
