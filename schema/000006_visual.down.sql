DROP TABLE IF EXISTS visual_checks;
DROP TABLE IF EXISTS visual_baselines;
