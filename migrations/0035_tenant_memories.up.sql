-- Tenants and their memories (docs/learning.md).
--
-- A key's tenant: keys that share one share what their searches taught. NULL: the key is a
-- tenant of its own ('key:' || id, a name no tenant can take: tenant names have no ':').
-- Searches without a key and with an admin key are the operator's: tenant '' (global).
ALTER TABLE api_keys ADD COLUMN tenant text
    CHECK (tenant IS NULL OR tenant ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$');

-- A memory: the query of searches labelled with a tool (an agent used the tool the search
-- returned), a retrieval key of the tool for its tenant. One row per tool, tenant, teaching
-- key and query (compared case-insensitively, whitespace collapsed: norm). Global rows
-- (tenant '') have no key: the operator's, or a query k-anonymous across enough keys.
-- Written only by the memory sweep (internal/memory); the search statement reads them.
CREATE TABLE tool_memories (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tool_id     bigint NOT NULL REFERENCES tools (id) ON DELETE CASCADE,
    tenant      text NOT NULL,
    key_id      bigint REFERENCES api_keys (id) ON DELETE CASCADE,
    norm        text NOT NULL,
    query       text NOT NULL,
    embedding   vector,
    searches    integer NOT NULL CHECK (searches > 0),
    labelled_at timestamptz NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    CHECK ((tenant = '') = (key_id IS NULL))
);
CREATE UNIQUE INDEX tool_memories_identity ON tool_memories (tool_id, tenant, coalesce(key_id, 0), norm);
CREATE INDEX tool_memories_key ON tool_memories (key_id) WHERE key_id IS NOT NULL;

-- A tool's memories removed by the operator: labels of searches made before forgotten_at
-- teach it nothing again.
CREATE TABLE tool_memory_forgets (
    tool_id      bigint PRIMARY KEY REFERENCES tools (id) ON DELETE CASCADE,
    forgotten_at timestamptz NOT NULL
);

-- The memory sweep's mark, as observed_query_sweep: labels written up to labels_until are
-- swept; min_keys the k-anonymity threshold the last finished sweep applied.
CREATE TABLE memory_sweep (
    singleton      boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    labels_until   timestamptz NOT NULL DEFAULT '1970-01-01',
    sweeping_until timestamptz,
    after_tool     bigint NOT NULL DEFAULT 0,
    min_keys       integer CHECK (min_keys > 0),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
INSERT INTO memory_sweep DEFAULT VALUES;

-- The embedding column takes the stored space's dimension (embed.setSpace re-types it with
-- tool_vectors'), and its HNSW index (toolgate_index_memories, sql/functions/memory.sql).
DO $$
DECLARE
    d integer;
BEGIN
    SELECT dims INTO d FROM embedding_space;
    IF d IS NOT NULL THEN
        EXECUTE format('ALTER TABLE tool_memories ALTER COLUMN embedding TYPE vector(%s)', d);
        IF d <= 2000 THEN
            CREATE INDEX tool_memories_hnsw ON tool_memories USING hnsw (embedding vector_cosine_ops)
                WITH (m = 16, ef_construction = 32);
        END IF;
    END IF;
END $$;
