DROP TABLE IF EXISTS audit_entries;
