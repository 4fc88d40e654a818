-- Curations (docs/curations.md): query rules that pin, hide or boost a tool for the queries
-- they match, synonyms of the query's words, and a per-tool switch of the knowledge
-- expansion. Rules and synonyms belong to a tenant (api_keys.tenant, or 'key:' || id for a
-- key that is a tenant of its own) or, with tenant NULL, to every search. The search
-- statement reads them (toolgate_search_rules, toolgate_with_synonyms in
-- sql/functions/curations.sql).
CREATE TABLE search_rules (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant     text CHECK (tenant IS NULL OR tenant ~ '^([A-Za-z0-9][A-Za-z0-9._-]{0,63}|key:[0-9]+)$'),
    -- exact: the query's words are the pattern's, in order; contains: the query holds every
    -- word of the pattern (words: lower-cased runs of letters and digits).
    match      text NOT NULL CHECK (match IN ('exact', 'contains')),
    pattern    text NOT NULL CHECK (length(pattern) BETWEEN 1 AND 200),
    action     text NOT NULL CHECK (action IN ('pin', 'hide', 'boost')),
    -- the namespaced tool name: a rule outlives a tool removed and synced back
    tool       text NOT NULL CHECK (length(tool) BETWEEN 1 AND 200),
    boost      double precision CHECK (boost IS NULL OR (boost > 0 AND boost <= 100)),
    position   integer CHECK (position IS NULL OR position BETWEEN 1 AND 100),
    created_at timestamptz NOT NULL DEFAULT now(),
    created_by text,
    CHECK ((action = 'boost') = (boost IS NOT NULL)),
    CHECK ((action = 'pin') = (position IS NOT NULL))
);
CREATE INDEX search_rules_tenant ON search_rules (tenant);

CREATE TABLE search_synonyms (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant     text CHECK (tenant IS NULL OR tenant ~ '^([A-Za-z0-9][A-Za-z0-9._-]{0,63}|key:[0-9]+)$'),
    word       text NOT NULL CHECK (length(word) BETWEEN 1 AND 64 AND word = lower(word)),
    synonyms   text[] NOT NULL CHECK (cardinality(synonyms) BETWEEN 1 AND 20),
    created_at timestamptz NOT NULL DEFAULT now(),
    created_by text,
    UNIQUE NULLS NOT DISTINCT (tenant, word)
);
CREATE INDEX search_synonyms_word ON search_synonyms (word);

-- Off: the tool's next enrichment leaves out its knowledge expansion (the related words
-- of enrichment.md#knowledge-expansion), which drops its expansion component.
ALTER TABLE tools ADD COLUMN expansion_off boolean NOT NULL DEFAULT false;
