DROP VIEW IF EXISTS profile_experiment_comparison;
DROP VIEW IF EXISTS profile_experiment_arms;
DROP FUNCTION IF EXISTS toolgate_ab_bucket(bigint, text);
DROP INDEX IF EXISTS search_log_experiment;
ALTER TABLE search_log
    DROP CONSTRAINT IF EXISTS search_log_arm,
    DROP COLUMN IF EXISTS arm,
    DROP COLUMN IF EXISTS experiment_id;
DROP TABLE IF EXISTS profile_experiments;
