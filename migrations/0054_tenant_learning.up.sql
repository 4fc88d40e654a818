-- The learning chart of one tenant (GET /admin/analytics/learning?tenant=...).
--
-- The log row names the tenant whose memories the search read (auth.Caller.Tenant: '' for
-- the operator's, a key's tenant, 'key:' || id for a key of no tenant, an OAuth token's
-- tenant claim); NULL for the searches logged before this migration.
ALTER TABLE search_log ADD COLUMN tenant text;

-- Per hour and tenant, its searches and those with a result the memory branch scored
-- (sql/functions/analytics.sql, toolgate_search_tenants_of). The search_rollup job fills it
-- with the other rollups.
CREATE TABLE search_rollup_tenants (
    hour          timestamptz NOT NULL,
    tenant        text NOT NULL,
    searches      bigint NOT NULL,
    memory_helped bigint NOT NULL,
    PRIMARY KEY (tenant, hour)
);

-- the retention's deletes by hour
CREATE INDEX search_rollup_tenants_hour ON search_rollup_tenants (hour);
