-- The lexical index's recompute of its impacts after the average document length drifted
-- (internal/lexical) is done by one flush at a time. It held a session-level advisory lock
-- across its batches; behind a pooler in transaction mode (pgbouncer) the lock and its
-- release can reach different server connections and the lock stays held. This one-row
-- lease is claimed, renewed by each batch and released in ordinary transactions instead:
-- holder names the flush that holds it, until when it expires (a flush that died leaves a
-- lease that the next flush may take once it has expired).
CREATE TABLE search_reimpact_lease (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    holder    text,
    until     timestamptz NOT NULL DEFAULT '-infinity'
);
INSERT INTO search_reimpact_lease DEFAULT VALUES;
