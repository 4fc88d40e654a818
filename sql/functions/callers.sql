-- Who made a search, as the search log records it: the rules every query that counts, caps
-- or learns from searches by their caller shares.
--
-- Applied after the migrations by internal/postgres.MigrateUp, whole, whenever its content
-- changed or a migration ran: every statement here must be re-runnable (CREATE OR REPLACE).
-- Files apply in name order: this one comes before the files that use it.

-- Whether a search was made with an OAuth access token (its caller is auth.OAuthName's
-- 'oauth:<issuer>#<subject>'): such a search has no key to count toward a threshold, cap or
-- revoke, and is not the operator's keyless search, so it teaches nothing — no observed
-- query, no memory, no tune (docs/auth.md#oauth) — and an A/B experiment caps it per subject
-- as it caps a search key (experiments.sql).
CREATE OR REPLACE FUNCTION toolgate_token_search(caller text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(caller, '') LIKE 'oauth:%'
$$;
