-- OAuth 2.1 to upstream MCP servers (docs/upstream-oauth.md): an mcp_http source configured
-- for OAuth holds its authorization here, its tokens and client secret sealed with
-- AES-256-GCM under the key named by key_id (TOOLGATE_SECRET_KEYS). Nothing secret is
-- stored in clear: `secret` is the ciphertext of a JSON object of the access token, the
-- refresh token and the client secret, bound to its source by the cipher's associated data.
CREATE TABLE source_oauth (
    source_id bigint PRIMARY KEY REFERENCES sources (id) ON DELETE CASCADE,
    -- authorized: tokens are held; unauthorized: none (never authorized, or revoked);
    -- refresh_failed: the refresh was refused, and nothing is sent upstream until an
    -- operator authorizes the source again
    state text NOT NULL CHECK (state IN ('authorized', 'unauthorized', 'refresh_failed')),
    -- why the source is not authorized: toolgate's words with the authorization server's
    -- error code, bounded
    error text,
    issuer text NOT NULL DEFAULT '',
    token_endpoint text NOT NULL DEFAULT '',
    revocation_endpoint text NOT NULL DEFAULT '',
    client_id text NOT NULL DEFAULT '',
    -- how the client authenticates at the token endpoint: none, client_secret_basic or
    -- client_secret_post
    token_auth_method text NOT NULL DEFAULT 'none',
    resource text NOT NULL DEFAULT '',
    scope text NOT NULL DEFAULT '',
    key_id text,
    secret bytea,
    expires_at timestamptz,
    -- bumped by every write of new tokens: a refresh writes its tokens only over the ones it
    -- started from, so two processes refreshing at once cannot lose a rotated refresh token
    generation bigint NOT NULL DEFAULT 0,
    authorized_at timestamptz,
    updated_at timestamptz NOT NULL DEFAULT now(),
    CHECK ((key_id IS NULL) = (secret IS NULL))
);

-- An authorization started by an operator and not finished yet: the callback accepts only
-- a state issued here (by its SHA-256, the state itself is never stored), once, before
-- expires_at. The PKCE verifier and a pre-registered client's secret are sealed as in
-- source_oauth.
CREATE TABLE source_oauth_pending (
    state_hash bytea PRIMARY KEY,
    source_id bigint NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
    issuer text NOT NULL,
    token_endpoint text NOT NULL,
    revocation_endpoint text NOT NULL,
    client_id text NOT NULL,
    token_auth_method text NOT NULL,
    resource text NOT NULL,
    scope text NOT NULL,
    redirect_uri text NOT NULL,
    key_id text NOT NULL,
    secret bytea NOT NULL,
    started_by text NOT NULL,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX source_oauth_pending_source ON source_oauth_pending (source_id);
CREATE INDEX source_oauth_pending_expires ON source_oauth_pending (expires_at);
