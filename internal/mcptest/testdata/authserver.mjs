// A real OAuth 2.1 / OpenID authorization server for toolgate's tests: oidc-provider (npm),
// installed by scripts/test.sh into .cache/oauth-as. It issues JWT access tokens bound to a
// resource (RFC 8707) by client credentials and by authorization code with PKCE (its
// development login form accepts any user), registers clients dynamically, and rotates its
// signing key on POST /_rotate.
//
// Configuration is one JSON argument:
//   {"resources": ["http://127.0.0.1:1234"], "scopes": "toolgate:search toolgate:admin",
//    "clients": [{"client_id": "...", "client_secret": "...", "claims": {...}, "redirect_uris": [...]}],
//    "accessTokenTTL": 3600, "opaqueResources": ["http://127.0.0.1:1234"]}
// It issues refresh tokens to clients allowed the refresh_token grant that ask for
// offline_access, and revokes tokens at /token/revocation (RFC 7009). Tokens for an opaque
// resource are opaque strings, checked at /token/introspection (RFC 7662) by any client
// authenticated with its secret.
// Once listening it prints {"issuer": "http://127.0.0.1:PORT"} on one line.
import http from 'node:http';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import Provider, { errors } from 'oidc-provider';

const config = JSON.parse(process.argv[2] || '{}');
const scopes = config.scopes || 'toolgate:search toolgate:admin';
const claimsOf = Object.fromEntries((config.clients || []).map((c) => [c.client_id, c.claims || {}]));

function newKey() {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), use: 'sig', alg: 'RS256' };
}

function build(issuer, keys) {
  const provider = new Provider(issuer, {
    clients: (config.clients || []).map((c) => ({
      client_id: c.client_id,
      client_secret: c.client_secret,
      grant_types: ['client_credentials', 'authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: c.redirect_uris || ['http://127.0.0.1/callback'],
      scope: `${scopes} offline_access`,
    })),
    jwks: { keys },
    scopes: ['openid', 'offline_access', ...scopes.split(' ')],
    issueRefreshToken: async (ctx, client, code) => client.grantTypeAllowed('refresh_token') && code.scopes.has('offline_access'),
    features: {
      revocation: { enabled: true },
      devInteractions: { enabled: true },
      introspection: { enabled: true, allowedPolicy: async (ctx, client) => client.clientAuthMethod !== 'none' },
      clientCredentials: { enabled: true },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (ctx, client, oneOf) => oneOf?.[0] ?? config.resources[0],
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resourceIndicator) => {
          // every resource this server knows; toolgate tests ask for others to get tokens
          // whose audience is not toolgate
          if (!config.resources.includes(resourceIndicator)) throw new errors.InvalidTarget();
          return { scope: scopes, audience: resourceIndicator, accessTokenTTL: config.accessTokenTTL || 3600,
            accessTokenFormat: (config.opaqueResources || []).includes(resourceIndicator) ? 'opaque' : 'jwt', jwt: { sign: { alg: 'RS256' } } };
        },
      },
    },
    extraTokenClaims: (ctx, token) => claimsOf[token.clientId],
    // the dev login form's consent grants what the client asked for
    loadExistingGrant: undefined,
  });
  provider.on('server_error', (ctx, err) => console.error('server_error', err));
  return provider;
}

let keys = [newKey()];
const server = http.createServer();
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  let handler = build(issuer, keys).callback();
  server.on('request', (req, res) => {
    if (req.method === 'POST' && req.url === '/_rotate') {
      // the new key signs from now on; the old one stays published, as a rotation does
      keys = [newKey(), keys[0]];
      handler = build(issuer, keys).callback();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kid: keys[0].kid }));
      return;
    }
    handler(req, res);
  });
  process.stdout.write(JSON.stringify({ issuer }) + '\n');
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
