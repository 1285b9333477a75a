-- The flaky list over the daily rollup (issue 31 item 3) reads the window's days of a project in
-- (identity, day) order with only the columns it sums: an index-only scan, no sort of wide rows
-- (a day's row carries two duration histograms, about 1 kB). Its included columns change when a
-- run finishes, so those updates of stats_scenario_days are no longer heap-only: each adds an
-- entry to this index and to the primary key (docs/benchmarks.md, read paths round 4).
CREATE INDEX stats_scenario_days_flaky_idx ON stats_scenario_days (project_id, identity, day)
    INCLUDE (n, passed, flips, retry_passes, flaky_results, lost_ms, heals, first_ok, first_retry, first_at, last_ok, first_flaky, last_flaky)
    WHERE n > 0;
