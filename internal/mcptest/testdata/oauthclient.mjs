// An MCP client of the official TypeScript SDK completing the MCP authorization flow
// against toolgate: a 401 with the Protected Resource Metadata's address, discovery of the
// authorization server, dynamic client registration, authorization code with PKCE (the
// authorization server's development login form is filled in as a person would), the
// token, then find_tools and call_tool. Arguments: toolgate's /mcp URL, a query, and the
// name of the tool to call. It prints one JSON line: the tools found and the call's text.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

const [serverUrl, query, toolName] = process.argv.slice(2);
const redirectUrl = 'http://127.0.0.1/callback';

const state = {};
const provider = {
  get redirectUrl() { return redirectUrl; },
  get clientMetadata() {
    return {
      client_name: 'toolgate oauth test', redirect_uris: [redirectUrl], grant_types: ['authorization_code'],
      response_types: ['code'], token_endpoint_auth_method: 'none',
    };
  },
  clientInformation: () => state.client,
  saveClientInformation: (c) => { state.client = c; },
  tokens: () => state.tokens,
  saveTokens: (t) => { state.tokens = t; },
  redirectToAuthorization: (url) => { state.authorizationUrl = url; },
  saveCodeVerifier: (v) => { state.verifier = v; },
  codeVerifier: () => state.verifier,
};

// signIn plays the user agent: it follows the authorization server's redirects with its
// cookies, signs in and consents on its forms, and returns the code sent to redirectUrl.
async function signIn(start) {
  const cookies = new Map();
  let url = new URL(start);
  let form;
  for (let step = 0; step < 20; step++) {
    const init = { redirect: 'manual', headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } };
    if (form) {
      init.method = 'POST';
      init.headers['content-type'] = 'application/x-www-form-urlencoded';
      init.body = new URLSearchParams(form).toString();
      form = undefined;
    }
    const resp = await fetch(url, init);
    for (const c of resp.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      cookies.set(pair.slice(0, i), pair.slice(i + 1));
    }
    const location = resp.headers.get('location');
    if (location) {
      const next = new URL(location, url);
      if (next.href.startsWith(redirectUrl)) {
        const code = next.searchParams.get('code');
        if (!code) throw new Error(`authorization refused: ${next.search}`);
        return code;
      }
      url = next;
      continue;
    }
    const html = await resp.text();
    const action = html.match(/<form[^>]*action="([^"]+)"/);
    const prompt = html.match(/name="prompt" value="([^"]+)"/);
    if (resp.status !== 200 || !action || !prompt) throw new Error(`unexpected page ${resp.status} at ${url}: ${html.slice(0, 500)}`);
    url = new URL(action[1], url);
    form = prompt[1] === 'login' ? { prompt: 'login', login: 'alice', password: 'any' } : { prompt: prompt[1] };
  }
  throw new Error('no code after 20 steps');
}

const client = new Client({ name: 'toolgate-oauth-test', version: '1.0.0' });
let transport = new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider });
try {
  await client.connect(transport);
  throw new Error('connected without authorization');
} catch (err) {
  if (!(err instanceof UnauthorizedError)) throw err;
}
const code = await signIn(state.authorizationUrl);
await transport.finishAuth(code);
transport = new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider });
await client.connect(transport);
const found = await client.callTool({ name: 'find_tools', arguments: { query, limit: 3 } });
const tools = JSON.parse(found.content[0].text).tools.map((t) => t.name);
const called = await client.callTool({ name: 'call_tool', arguments: { name: toolName, arguments: {} } });
process.stdout.write(JSON.stringify({
  tools, called: called.content[0].text, isError: !!called.isError,
  resource: state.authorizationUrl.searchParams.get('resource'),
  pkce: state.authorizationUrl.searchParams.get('code_challenge_method'),
  scope: state.tokens.scope,
}) + '\n');
await client.close();
