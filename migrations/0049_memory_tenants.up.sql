-- How the search statement's memory branch reads a tenant's memories (docs/learning.md).
--
-- A tenant with few memories is scanned exactly, through this b-tree index: its own rows,
-- one distance each. The HNSW index, filtered by tenant, would have to walk past the other
-- tenants' nearer memories to find it ten of its own.
CREATE INDEX tool_memories_tenant ON tool_memories (tenant);

-- Each tenant's number of memories, recounted by the memory sweep (internal/memory): the
-- search statement scans a tenant exactly below a threshold, through the HNSW index above.
-- A count that lags the table only changes which scan runs, not what it finds.
CREATE TABLE tool_memory_tenants (
    tenant   text PRIMARY KEY,
    memories integer NOT NULL CHECK (memories > 0)
);
INSERT INTO tool_memory_tenants (tenant, memories)
SELECT tenant, count(*) FROM tool_memories GROUP BY tenant;
