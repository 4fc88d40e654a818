-- The answers over one tenant read the table and the column (sql/functions/analytics.sql);
-- the older file's rollup step and learning answer replace the rest on the next upgrade.
DROP FUNCTION IF EXISTS toolgate_analytics_learning(timestamptz, text);
DROP FUNCTION IF EXISTS toolgate_search_tenants(timestamptz, text);
DROP FUNCTION IF EXISTS toolgate_search_tenants_of(timestamptz, timestamptz);
DROP TABLE search_rollup_tenants;
ALTER TABLE search_log DROP COLUMN tenant;
