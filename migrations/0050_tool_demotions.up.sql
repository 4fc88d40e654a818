-- Negative evidence (docs/learning.md): per tenant and tool, how often labelled searches of
-- the tenant returned the tool first while the agent used another one (ignored), how often
-- its calls failed (failed) and how often it was used (used). Written only by the memory
-- sweep (internal/memory), whole; the search statement reads the caller's tenant's and the
-- operator's ('') rows.
CREATE TABLE tool_demotions (
    tenant  text NOT NULL,
    tool_id bigint NOT NULL REFERENCES tools (id) ON DELETE CASCADE,
    ignored integer NOT NULL CHECK (ignored >= 0),
    failed  integer NOT NULL CHECK (failed >= 0),
    used    integer NOT NULL CHECK (used >= 0),
    PRIMARY KEY (tenant, tool_id)
);
