-- OAuth 2.1 authorization of mcp_http sources at their upstream's authorization server
-- (internal/upstreamauth). Secrets are sealed before they reach these statements.

-- name: GetSourceOAuth :one
SELECT * FROM source_oauth WHERE source_id = $1;

-- name: InsertSourceOAuthPending :exec
INSERT INTO source_oauth_pending (state_hash, source_id, issuer, token_endpoint, revocation_endpoint, client_id,
    token_auth_method, resource, scope, redirect_uri, key_id, secret, started_by, expires_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14);

-- name: TakeSourceOAuthPending :one
-- Consumes a pending authorization: the callback of a state runs once, whatever it finds.
DELETE FROM source_oauth_pending WHERE state_hash = $1 RETURNING *;

-- name: DeleteExpiredSourceOAuthPending :execrows
DELETE FROM source_oauth_pending WHERE expires_at < now();

-- name: StoreSourceOAuthTokens :one
-- The tokens of a finished authorization: the source becomes authorized, whatever it was.
INSERT INTO source_oauth (source_id, state, error, issuer, token_endpoint, revocation_endpoint, client_id,
    token_auth_method, resource, scope, key_id, secret, expires_at, authorized_at, updated_at)
VALUES ($1, 'authorized', NULL, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, now(), now())
ON CONFLICT (source_id) DO UPDATE SET state = 'authorized', error = NULL, issuer = EXCLUDED.issuer,
    token_endpoint = EXCLUDED.token_endpoint, revocation_endpoint = EXCLUDED.revocation_endpoint,
    client_id = EXCLUDED.client_id, token_auth_method = EXCLUDED.token_auth_method,
    resource = EXCLUDED.resource, scope = EXCLUDED.scope, key_id = EXCLUDED.key_id, secret = EXCLUDED.secret,
    expires_at = EXCLUDED.expires_at, authorized_at = now(), updated_at = now(),
    generation = source_oauth.generation + 1
RETURNING generation;

-- name: UpdateSourceOAuthTokens :execrows
-- The tokens of a refresh, written only over the generation the refresh started from.
UPDATE source_oauth SET key_id = $3, secret = $4, expires_at = $5, scope = $6,
    generation = generation + 1, updated_at = now()
WHERE source_id = $1 AND generation = $2 AND state = 'authorized';

-- name: FailSourceOAuth :execrows
-- A refresh refused: the tokens are dropped, and the source waits for an operator.
UPDATE source_oauth SET state = 'refresh_failed', error = $3, key_id = NULL, secret = NULL, expires_at = NULL,
    generation = generation + 1, updated_at = now()
WHERE source_id = $1 AND generation = $2;

-- name: RevokeSourceOAuth :exec
-- Forgets a source's tokens (revoked by an operator).
UPDATE source_oauth SET state = 'unauthorized', error = NULL, key_id = NULL, secret = NULL, expires_at = NULL,
    generation = generation + 1, updated_at = now()
WHERE source_id = $1;

-- name: ListSourceOAuthSealed :many
-- The sealed secrets not under key_id, for re-encryption under it.
SELECT source_id, key_id, secret, generation FROM source_oauth
WHERE secret IS NOT NULL AND key_id <> sqlc.arg(key_id)::text;

-- name: ResealSourceOAuth :execrows
UPDATE source_oauth SET key_id = $3, secret = $4, updated_at = now()
WHERE source_id = $1 AND generation = $2;

-- name: ListSourceOAuthPendingSealed :many
SELECT state_hash, source_id, key_id, secret FROM source_oauth_pending WHERE key_id <> sqlc.arg(key_id)::text;

-- name: ResealSourceOAuthPending :exec
UPDATE source_oauth_pending SET key_id = $2, secret = $3 WHERE state_hash = $1;

-- name: GetSourceOAuthByName :one
SELECT o.* FROM source_oauth o JOIN sources s ON s.id = o.source_id WHERE s.name = $1;
