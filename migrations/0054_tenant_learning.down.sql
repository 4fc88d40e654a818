-- The answers over one tenant read the table and the column (sql/functions/analytics.sql):
-- they go, with the psql view over the learning answer; the older file's rollup step,
-- learning answer and view replace the rest on the next upgrade.
DROP VIEW IF EXISTS search_learning_daily;
DROP FUNCTION IF EXISTS toolgate_analytics_learning(timestamptz, text);
DROP FUNCTION IF EXISTS toolgate_analytics_tenants(timestamptz);
DROP FUNCTION IF EXISTS toolgate_search_tenants(timestamptz, text);
DROP FUNCTION IF EXISTS toolgate_search_tenants_of(timestamptz, timestamptz);
DROP TABLE search_rollup_tenants;
ALTER TABLE search_log DROP COLUMN tenant;
