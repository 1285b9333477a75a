-- A scenario fed by a dataset row names the dataset; its row (from 1) is example_row.
ALTER TABLE run_scenarios ADD COLUMN dataset text;
