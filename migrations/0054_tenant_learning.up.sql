-- The learning chart of one tenant (GET /admin/analytics/learning?tenant=...).
--
-- The log row names the tenant whose memories the search read (auth.Caller.Tenant: '' for
-- the operator's, a key's tenant, 'key:' || id for a key of no tenant, an OAuth token's
-- tenant claim); NULL for the searches logged before this migration.
ALTER TABLE search_log ADD COLUMN tenant text;

-- Per hour and tenant, its searches, those with a result the memory branch scored, the
-- labelled ones and of those the ones whose best label was ranked first and in the top 5
-- (sql/functions/analytics.sql, toolgate_search_tenants_of). The search_rollup job fills it
-- with the other rollups.
CREATE TABLE search_rollup_tenants (
    hour          timestamptz NOT NULL,
    tenant        text NOT NULL,
    searches      bigint NOT NULL,
    memory_helped bigint NOT NULL,
    labelled      bigint NOT NULL,
    hit_1         bigint NOT NULL,
    hit_5         bigint NOT NULL,
    PRIMARY KEY (tenant, hour)
);

-- the relabelled hours' and the retention's deletes by hour
CREATE INDEX search_rollup_tenants_hour ON search_rollup_tenants (hour);
