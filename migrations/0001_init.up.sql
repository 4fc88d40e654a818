-- toolgate schema, version 1: the catalog, its enrichment and vectors, weight profiles,
-- the retrieval log and API keys. River's own tables are created by rivermigrate, not here.
CREATE EXTENSION IF NOT EXISTS vector;

-- A source owns tools: a pushed JSON catalog, or an MCP server over stdio or Streamable HTTP.
-- Source names contain no underscore, so a namespaced tool name `source__tool` splits
-- unambiguously at its first "__".
CREATE TABLE sources (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name          text NOT NULL UNIQUE CHECK (name ~ '^[a-z0-9][a-z0-9-]{0,31}$'),
    kind          text NOT NULL CHECK (kind IN ('catalog', 'mcp_stdio', 'mcp_http')),
    -- kind-specific settings: {"command","args","env"} for mcp_stdio, {"url","headers"} for mcp_http.
    config        jsonb NOT NULL DEFAULT '{}'::jsonb,
    -- how often the periodic job syncs this source; NULL means only on demand.
    sync_interval interval CHECK (sync_interval IS NULL OR sync_interval >= interval '10 seconds'),
    -- in review mode a changed description or schema is held back from search until approved.
    review_mode   boolean NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

-- One row per sync attempt of a source; the newest is the source's "last_sync".
CREATE TABLE sync_runs (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    source_id   bigint NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
    state       text NOT NULL CHECK (state IN ('running', 'succeeded', 'failed')),
    created     integer NOT NULL DEFAULT 0,
    updated     integer NOT NULL DEFAULT 0,
    deleted     integer NOT NULL DEFAULT 0,
    unchanged   integer NOT NULL DEFAULT 0,
    skipped     jsonb NOT NULL DEFAULT '[]'::jsonb, -- [{"name","reason"}] for invalid tools
    error       text,
    started_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
);
CREATE INDEX sync_runs_source_started ON sync_runs (source_id, started_at DESC);

CREATE TABLE tools (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    source_id     bigint NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
    -- namespaced name `source__original_name`, unique across the catalog.
    name          text NOT NULL UNIQUE,
    -- the name the owning server knows the tool by, used to call it.
    original_name text NOT NULL,
    title         text,
    description   text NOT NULL DEFAULT '',
    input_schema  jsonb NOT NULL CHECK (jsonb_typeof(input_schema) = 'object'),
    output_schema jsonb CHECK (output_schema IS NULL OR jsonb_typeof(output_schema) = 'object'),
    annotations   jsonb,
    -- hex SHA-256 of the canonical definition (see internal/catalog).
    content_hash  text NOT NULL,
    enabled       boolean NOT NULL DEFAULT true,
    -- 'pending' while a changed definition of a review-mode source awaits approval:
    -- such a tool is never returned by search.
    review_state  text NOT NULL DEFAULT 'approved' CHECK (review_state IN ('approved', 'pending')),
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (source_id, original_name)
);

-- Every change of a tool's definition, kept for audit and for review-mode approval.
CREATE TABLE tool_revisions (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    source_id      bigint NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
    tool_name      text NOT NULL,  -- kept as text: history outlives a deleted tool
    action         text NOT NULL CHECK (action IN ('created', 'updated', 'deleted')),
    old_hash       text,
    new_hash       text,
    changed_fields text[] NOT NULL DEFAULT '{}',
    definition     jsonb,          -- the new definition (NULL for deletes)
    status         text NOT NULL DEFAULT 'applied' CHECK (status IN ('applied', 'pending', 'approved', 'rejected')),
    created_at     timestamptz NOT NULL DEFAULT now(),
    decided_at     timestamptz
);
CREATE INDEX tool_revisions_tool ON tool_revisions (tool_name, created_at DESC);
CREATE INDEX tool_revisions_pending ON tool_revisions (source_id) WHERE status = 'pending';

-- Outputs of the enrichment steps (Tool-DE profile, synthetic questions, key topics), keyed by
-- the tool's content hash and the producing model so an unchanged tool is never re-enriched.
CREATE TABLE tool_enrichments (
    tool_id       bigint NOT NULL REFERENCES tools (id) ON DELETE CASCADE,
    step          text NOT NULL CHECK (step IN ('profile', 'questions', 'topics')),
    content_hash  text NOT NULL,
    model         text NOT NULL,
    output        jsonb NOT NULL,
    prompt_tokens     integer NOT NULL DEFAULT 0,
    completion_tokens integer NOT NULL DEFAULT 0,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tool_id, step)
);

-- One row per tool document component: its text, a hash of the text and its embedding.
-- kind is one of name, description, parameters, question, topics, profile_function,
-- profile_tags, profile_when_to_use, profile_limitation, profile_example_usage, concat.
CREATE TABLE tool_components (
    tool_id    bigint NOT NULL REFERENCES tools (id) ON DELETE CASCADE,
    kind       text NOT NULL,
    ordinal    integer NOT NULL DEFAULT 0,
    text       text NOT NULL,
    text_hash  text NOT NULL,
    embedding  vector,
    model      text,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tool_id, kind, ordinal)
);

-- The embedding space every stored vector lives in. Exactly one row once anything is embedded;
-- serve refuses to start when the configured embedder disagrees with it.
CREATE TABLE embedding_space (
    singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    model      text NOT NULL,
    dims       integer NOT NULL CHECK (dims > 0 AND dims <= 16000),
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- TDWA weight profiles (ScaleMCP Equation 1). weights maps component kind -> weight >= 0.
CREATE TABLE weight_profiles (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name          text NOT NULL UNIQUE CHECK (name ~ '^[a-z0-9][a-z0-9_.-]{0,63}$'),
    strategy      text NOT NULL CHECK (strategy IN ('tdwa', 'concat', 'mean')),
    weights       jsonb NOT NULL DEFAULT '{}'::jsonb,
    is_active     boolean NOT NULL DEFAULT false,
    -- the complete vector set searches read; NULL until the first one is built.
    current_set   bigint,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX weight_profiles_one_active ON weight_profiles (is_active) WHERE is_active;

-- A generation of tool vectors for one profile. A re-weight builds a new set while searches
-- read the current one, then switches weight_profiles.current_set in one transaction.
CREATE TABLE vector_sets (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    profile_id  bigint NOT NULL REFERENCES weight_profiles (id) ON DELETE CASCADE,
    state       text NOT NULL CHECK (state IN ('building', 'ready', 'retired', 'failed')),
    total       integer NOT NULL DEFAULT 0,
    done        integer NOT NULL DEFAULT 0,
    error       text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
);
ALTER TABLE weight_profiles
    ADD CONSTRAINT weight_profiles_current_set_fk FOREIGN KEY (current_set) REFERENCES vector_sets (id) ON DELETE SET NULL;

-- The searchable vector of each tool in each vector set. The column gets its dimension and
-- HNSW index when the embedding space is first fixed (see internal/embed).
CREATE TABLE tool_vectors (
    set_id    bigint NOT NULL REFERENCES vector_sets (id) ON DELETE CASCADE,
    tool_id   bigint NOT NULL REFERENCES tools (id) ON DELETE CASCADE,
    embedding vector NOT NULL,
    PRIMARY KEY (set_id, tool_id)
);
CREATE INDEX tool_vectors_tool ON tool_vectors (tool_id);

-- API keys: only a SHA-256 of the secret is stored.
CREATE TABLE api_keys (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name         text NOT NULL,
    prefix       text NOT NULL UNIQUE,
    secret_hash  bytea NOT NULL,
    scope        text NOT NULL CHECK (scope IN ('search', 'admin')),
    sources      text[],          -- NULL: every source; otherwise the sources this key may see
    rate_per_min integer CHECK (rate_per_min IS NULL OR rate_per_min > 0),
    created_at   timestamptz NOT NULL DEFAULT now(),
    revoked_at   timestamptz,
    last_used_at timestamptz
);

-- The retrieval log, partitioned by month (partitions are made by
-- toolgate_ensure_search_log_partitions and dropped past the retention period).
CREATE SEQUENCE search_log_id_seq;
CREATE TABLE search_log (
    id           bigint NOT NULL DEFAULT nextval('search_log_id_seq'),
    created_at   timestamptz NOT NULL DEFAULT now(),
    query        text NOT NULL,
    variants     text[] NOT NULL DEFAULT '{}',
    mode         text NOT NULL,
    k            integer NOT NULL,
    filters      jsonb NOT NULL DEFAULT '{}'::jsonb,
    profile      text,
    format       text,
    plan         jsonb,
    rerank       jsonb,
    results      jsonb NOT NULL DEFAULT '[]'::jsonb, -- [{"name","score","lexical_rank","vector_rank"}]
    result_count integer NOT NULL DEFAULT 0,
    top_score    double precision,
    latency_ms   double precision,
    timings      jsonb,
    caller       text,
    session_id   text,
    PRIMARY KEY (id, created_at)
) PARTITION BY RANGE (created_at);
CREATE INDEX search_log_created ON search_log (created_at);
CREATE INDEX search_log_session ON search_log (session_id) WHERE session_id IS NOT NULL;

-- Which tools an agent called after a search, and whether the call worked.
CREATE TABLE search_feedback (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    search_id  bigint NOT NULL,
    tool_name  text NOT NULL,
    success    boolean,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX search_feedback_search ON search_feedback (search_id);

-- Creates the monthly partitions of search_log from the current month through months_ahead
-- months ahead; idempotent.
CREATE FUNCTION toolgate_ensure_search_log_partitions(months_ahead integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    m     date := date_trunc('month', now())::date;
    made  integer := 0;
    part  text;
BEGIN
    FOR i IN 0..months_ahead LOOP
        part := format('search_log_%s', to_char(m, 'YYYYMM'));
        IF to_regclass(part) IS NULL THEN
            EXECUTE format('CREATE TABLE %I PARTITION OF search_log FOR VALUES FROM (%L) TO (%L)',
                           part, m, (m + interval '1 month')::date);
            made := made + 1;
        END IF;
        m := (m + interval '1 month')::date;
    END LOOP;
    RETURN made;
END $$;

-- Drops the monthly partitions of search_log that end before now() - keep; returns how many.
CREATE FUNCTION toolgate_drop_search_log_partitions(keep interval) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    r       record;
    dropped integer := 0;
BEGIN
    FOR r IN
        SELECT c.relname
        FROM pg_inherits i
        JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'search_log'::regclass
          AND c.relname ~ '^search_log_[0-9]{6}$'
          AND (to_date(substr(c.relname, 12), 'YYYYMM') + interval '1 month') <= now() - keep
    LOOP
        EXECUTE format('DROP TABLE %I', r.relname);
        dropped := dropped + 1;
    END LOOP;
    RETURN dropped;
END $$;

SELECT toolgate_ensure_search_log_partitions(2);
