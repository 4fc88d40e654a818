-- Access control: one active key per name, and the per-key rate-limit counters.

-- A name identifies at most one active key, so `toolgate keys revoke NAME` is unambiguous;
-- revoked keys keep their rows (and names) for the record.
CREATE UNIQUE INDEX api_keys_active_name ON api_keys (name) WHERE revoked_at IS NULL;

-- Fixed one-minute windows of requests per key. Every API instance counts in this table,
-- so limits hold across instances and restarts. UNLOGGED: the counters are not worth WAL
-- and may be lost in a crash (the worst case is a fresh window). Old windows are deleted
-- by the api_key_rate_cleanup River job. No foreign key: a revoked or deleted key's
-- counters simply age out.
CREATE UNLOGGED TABLE api_key_rate (
    key_id       bigint      NOT NULL,
    window_start timestamptz NOT NULL,
    hits         integer     NOT NULL,
    PRIMARY KEY (key_id, window_start)
);
