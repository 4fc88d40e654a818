-- The psql view over the learning answer (sql/functions/analytics.sql) reads search_log.
DROP VIEW IF EXISTS search_learning_daily;
DROP TABLE tool_memory_query_forgets;
-- CASCADE: the psql views that count the columns (search_daily, search_traffic) go with them.
ALTER TABLE search_rollup_hourly DROP COLUMN low_confidence CASCADE, DROP COLUMN memory_helped;
ALTER TABLE search_log
    DROP COLUMN no_good_match CASCADE,
    DROP COLUMN confidence CASCADE;
