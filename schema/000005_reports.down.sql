DROP TABLE IF EXISTS run_ingests;
