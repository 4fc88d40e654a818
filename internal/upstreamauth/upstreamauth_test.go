package upstreamauth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/mcptest"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/internal/upstreamauth"
	"github.com/toolgate/toolgate/jobs"
)

// publicURL is toolgate's public URL in these tests: nothing listens there, the browser
// stops at the redirect to it (mcptest.SignIn).
const publicURL = "http://127.0.0.1:9"

var preClient = mcptest.AuthClient{ID: "toolgate-pre", Secret: "pre-secret",
	RedirectURIs: []string{publicURL + upstreamauth.CallbackPath}}

// clock is a test clock: real time plus an offset the test moves forward.
type clock struct{ offset atomic.Int64 }

func (c *clock) Now() time.Time          { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *clock) Advance(d time.Duration) { c.offset.Add(int64(d)) }

// counter counts the requests that reach the authorization server's token endpoint.
type counter struct {
	mu     sync.Mutex
	tokens int
}

func (c *counter) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "/token") {
		c.mu.Lock()
		c.tokens++
		c.mu.Unlock()
	}
	return http.DefaultTransport.RoundTrip(r)
}

func (c *counter) Tokens() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tokens
}

// env is a real authorization server (oidc-provider), a real MCP server it protects, and a
// database with one mcp_http source of that server configured for OAuth.
type env struct {
	pool    *pgxpool.Pool
	as      *mcptest.AuthServer
	up      *mcptest.ProtectedServer
	queue   jobs.Queue
	source  int64
	keys    string // TOOLGATE_SECRET_KEYS
	clock   *clock
	counter *counter
}

func newEnv(t *testing.T, oauthCfg string) *env {
	t.Helper()
	ctx := context.Background()
	srv := httptest.NewUnstartedServer(nil)
	as := mcptest.StartAuthServer(t, mcptest.AuthServerConfig{
		Resources: []string{"http://" + srv.Listener.Addr().String() + "/mcp"},
		Scopes:    "tools:read", Clients: []mcptest.AuthClient{preClient},
	})
	up := mcptest.NewProtectedServer(t, srv, as.Issuer)
	pool := pgtest.NewPool(t)
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: slog.New(slog.DiscardHandler)}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var id int64
	cfg := `{"url": "` + up.URL + `", "oauth": ` + oauthCfg + `}`
	if err := pool.QueryRow(ctx, `INSERT INTO sources (name, kind, config) VALUES ('up', 'mcp_http', $1) RETURNING id`, cfg).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return &env{pool: pool, as: as, up: up, queue: jobs.NewQueue(rc), source: id, keys: upstreamauth.NewKey(), clock: &clock{}, counter: &counter{}}
}

func (e *env) manager(t *testing.T, keys string) *upstreamauth.Manager {
	t.Helper()
	ring, err := upstreamauth.ParseKeys(keys)
	if err != nil {
		t.Fatal(err)
	}
	return upstreamauth.New(e.pool, upstreamauth.Settings{Keys: ring, PublicURL: publicURL,
		Client: &http.Client{Transport: e.counter}, Now: e.clock.Now}, slog.New(slog.DiscardHandler))
}

// authorize runs an operator's authorization of the source to its end and returns the URL
// the operator was sent to.
func (e *env) authorize(t *testing.T, m *upstreamauth.Manager, secret string) (upstreamauth.Start, *url.URL) {
	t.Helper()
	ctx := context.Background()
	st, err := m.Start(ctx, "up", upstreamauth.StartRequest{ClientSecret: secret, StartedBy: "test"})
	if err != nil {
		t.Fatal(err)
	}
	cb := mcptest.SignIn(t, st.AuthorizationURL, publicURL+upstreamauth.CallbackPath)
	name, err := m.Finish(ctx, cb.Query().Get("state"), cb.Query().Get("code"), cb.Query().Get("error"), cb.Query().Get("error_description"))
	if err != nil || name != "up" {
		t.Fatalf("finish: %q %v", name, err)
	}
	authURL, _ := url.Parse(st.AuthorizationURL)
	return st, authURL
}

func (e *env) state(t *testing.T) (state string, errText *string, keyID *string, secret []byte) {
	t.Helper()
	if err := e.pool.QueryRow(context.Background(), `SELECT state, error, key_id, secret FROM source_oauth WHERE source_id = $1`, e.source).
		Scan(&state, &errText, &keyID, &secret); err != nil {
		t.Fatal(err)
	}
	return state, errText, keyID, secret
}

// call connects to the source's server as the gateway does and calls echo.
func (e *env) call(ctx context.Context, m mcpclient.Authorizer) (string, error) {
	cfg := mcpclient.Config{URL: e.up.URL, OAuth: &mcpclient.OAuthConfig{}}
	cs, err := mcpclient.Connect(ctx, mcpclient.KindHTTP, cfg, mcpclient.Options{Auth: m, Source: "up", NoRetries: true})
	if err != nil {
		return "", err
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil {
		return "", err
	}
	return res.Content[0].(*mcp.TextContent).Text, nil
}

// TestAuthorizeDynamicClient: an operator authorizes a source whose server names its
// authorization server only through RFC 9728: toolgate discovers it, registers itself
// (RFC 7591), sends the operator to sign in with PKCE S256, a state and the resource, and
// stores the tokens sealed; the source syncs and its tool is called with them. The callback's
// state works once.
func TestAuthorizeDynamicClient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, `{}`)
	m := e.manager(t, e.keys)
	st, authURL := e.authorize(t, m, "")
	if !st.Registered || st.Issuer != e.as.Issuer {
		t.Errorf("start = %+v, want a dynamic registration at %s", st, e.as.Issuer)
	}
	q := authURL.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("state") == "" ||
		q.Get("resource") != e.up.URL || !strings.Contains(q.Get("scope"), "offline_access") {
		t.Errorf("authorization request %s: want PKCE S256, a state, resource %s and offline_access", authURL, e.up.URL)
	}
	rep, err := sources.SyncWith(ctx, e.pool, e.queue, e.source, sources.SyncOptions{Timeout: 20 * time.Second, Auth: m})
	if err != nil || rep.Result.Created != 1 {
		t.Fatalf("sync: %+v %v", rep, err)
	}
	if got, err := e.call(ctx, m); err != nil || got != "echo: hi" {
		t.Fatalf("call = %q, %v", got, err)
	}

	// sealed at rest: the stored bytes are not the tokens, and they open with the key only
	access, refresh, err := m.SecretsOf(ctx, "up")
	if err != nil || access == "" || refresh == "" {
		t.Fatalf("stored tokens: access %t refresh %t %v", access != "", refresh != "", err)
	}
	state, _, keyID, sealed := e.state(t)
	if state != upstreamauth.StateAuthorized || keyID == nil {
		t.Fatalf("state %q key %v", state, keyID)
	}
	for _, tok := range []string{access, refresh} {
		if bytes.Contains(sealed, []byte(tok)) {
			t.Error("a token is stored in clear")
		}
	}
	var clear int
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM source_oauth o, source_oauth_pending p
		WHERE position($1::bytea IN o.secret) > 0 OR position($1::bytea IN p.secret) > 0`, []byte(access)).Scan(&clear); err != nil || clear != 0 {
		t.Errorf("token found in clear in %d rows (%v)", clear, err)
	}
	if got := e.up.Accepted(); len(got) == 0 || got[len(got)-1] != access {
		t.Error("the server did not get the stored access token")
	}

	// the callback of a state already used, or never issued, does nothing
	if _, err := m.Finish(ctx, q.Get("state"), "code", "", ""); !errors.As(err, new(*upstreamauth.UnknownStateError)) {
		t.Errorf("second callback: %v, want *UnknownStateError", err)
	}
	if _, err := m.Finish(ctx, "forged", "code", "", ""); !errors.As(err, new(*upstreamauth.UnknownStateError)) {
		t.Errorf("forged state: %v, want *UnknownStateError", err)
	}

	// the authorization server's refusal is shown in toolgate's words, its text cut down
	// to bounded printable ASCII
	st, err = m.Start(ctx, "up", upstreamauth.StartRequest{})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(st.AuthorizationURL)
	_, err = m.Finish(ctx, u.Query().Get("state"), "", "access_denied\r\n", "<script>\x00"+strings.Repeat("é", 5000))
	var ae *upstreamauth.AuthorizationError
	if !errors.As(err, &ae) || len(err.Error()) > 400 || strings.ContainsAny(err.Error(), "\x00\r\né") {
		t.Errorf("refused authorization: %q", err)
	}

	// a state past its lifetime is refused
	st, err = m.Start(ctx, "up", upstreamauth.StartRequest{})
	if err != nil {
		t.Fatal(err)
	}
	u, _ = url.Parse(st.AuthorizationURL)
	e.clock.Advance(upstreamauth.DefaultPendingTTL + time.Second)
	var unknown *upstreamauth.UnknownStateError
	if _, err := m.Finish(ctx, u.Query().Get("state"), "code", "", ""); !errors.As(err, &unknown) || !unknown.Expired {
		t.Errorf("expired state: %v, want *UnknownStateError{Expired}", err)
	}
}

// TestRefresh: a token about to expire is refreshed before it is sent, and one the server
// refuses (401) is refreshed and the request sent again, each with one request to the
// token endpoint.
func TestRefresh(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, `{}`)
	m := e.manager(t, e.keys)
	e.authorize(t, m, "")
	first, _, _ := m.SecretsOf(ctx, "up")
	if got, err := e.call(ctx, m); err != nil || got != "echo: hi" {
		t.Fatalf("call = %q, %v", got, err)
	}

	// expiry: an hour later the token expires; the next request refreshes it first
	before := e.counter.Tokens()
	e.clock.Advance(time.Hour)
	if got, err := e.call(ctx, m); err != nil || got != "echo: hi" {
		t.Fatalf("call after expiry = %q, %v", got, err)
	}
	second, _, _ := m.SecretsOf(ctx, "up")
	if second == first || e.counter.Tokens() != before+1 {
		t.Errorf("after expiry: token changed %t, token requests %d, want one refresh", second != first, e.counter.Tokens()-before)
	}
	if acc := e.up.Accepted(); acc[len(acc)-1] != second {
		t.Error("the server did not get the refreshed token")
	}

	// 401: the server withdraws the current token; the request is sent again with a new one
	e.up.Reject(second)
	before = e.counter.Tokens()
	if got, err := e.call(ctx, m); err != nil || got != "echo: hi" {
		t.Fatalf("call after 401 = %q, %v", got, err)
	}
	third, _, _ := m.SecretsOf(ctx, "up")
	if third == second || e.counter.Tokens() != before+1 {
		t.Errorf("after 401: token changed %t, token requests %d, want one refresh", third != second, e.counter.Tokens()-before)
	}
}

// TestRefreshRefused: with a pre-registered client, a refresh token revoked at the
// authorization server (behind toolgate's back) makes the next refresh fail: the source is
// marked refresh_failed with the server's error code, and from then on nothing reaches the
// authorization server or the MCP server for it, syncs included, until it is authorized again.
func TestRefreshRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, `{"client_id": "`+preClient.ID+`"}`)
	m := e.manager(t, e.keys)
	st, authURL := e.authorize(t, m, preClient.Secret)
	if st.Registered || authURL.Query().Get("client_id") != preClient.ID {
		t.Fatalf("start %+v at %s: want the pre-registered client", st, authURL)
	}
	if got, err := e.call(ctx, m); err != nil || got != "echo: hi" {
		t.Fatalf("call = %q, %v", got, err)
	}
	_, refresh, _ := m.SecretsOf(ctx, "up")
	req, _ := http.NewRequest(http.MethodPost, e.as.Issuer+"/token/revocation",
		strings.NewReader(url.Values{"token": {refresh}, "token_type_hint": {"refresh_token"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(preClient.ID, preClient.Secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke at the authorization server: %v %v", resp, err)
	}
	resp.Body.Close()

	e.clock.Advance(time.Hour)
	_, err = e.call(ctx, m)
	var na *upstreamauth.NotAuthorizedError
	if !errors.As(err, &na) || na.State != upstreamauth.StateRefreshFailed {
		t.Fatalf("call after the refresh token was revoked: %v, want NotAuthorizedError refresh_failed", err)
	}
	state, errText, keyID, sealed := e.state(t)
	if state != upstreamauth.StateRefreshFailed || errText == nil || !strings.Contains(*errText, "invalid_grant") || keyID != nil || sealed != nil {
		t.Fatalf("source: state %q error %v key %v, want refresh_failed with invalid_grant and no tokens", state, errText, keyID)
	}
	tokens, served := e.counter.Tokens(), e.up.Requests()
	for range 3 {
		if _, err := e.call(ctx, m); !errors.As(err, &na) {
			t.Fatalf("call: %v, want NotAuthorizedError", err)
		}
	}
	_, err = sources.SyncWith(ctx, e.pool, e.queue, e.source, sources.SyncOptions{Timeout: 20 * time.Second, Auth: m})
	if !errors.As(err, &na) {
		t.Fatalf("sync: %v, want NotAuthorizedError", err)
	}
	if e.counter.Tokens() != tokens || e.up.Requests() != served {
		t.Errorf("after the refusal: %d token requests and %d server requests more, want none", e.counter.Tokens()-tokens, e.up.Requests()-served)
	}
	var runErr string
	if err := e.pool.QueryRow(ctx, `SELECT error FROM sync_runs WHERE source_id = $1 ORDER BY id DESC LIMIT 1`, e.source).Scan(&runErr); err != nil ||
		!strings.Contains(runErr, "refresh_failed") {
		t.Errorf("sync run error %q (%v), want the source's state", runErr, err)
	}

	// authorized again, it works again
	e.authorize(t, m, preClient.Secret)
	if got, err := e.call(ctx, m); err != nil || got != "echo: hi" {
		t.Fatalf("call after re-authorization = %q, %v", got, err)
	}
}

// TestKeyRotation: with a new key first and the old one kept, the stored tokens still open;
// Reencrypt seals them under the new key, after which the old key can go, and a keyring
// without the sealing key cannot open them.
func TestKeyRotation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, `{}`)
	old := e.manager(t, e.keys)
	e.authorize(t, old, "")
	before, _, _ := old.SecretsOf(ctx, "up")

	next := upstreamauth.NewKey()
	rotated := e.manager(t, next+","+e.keys)
	if tok, err := rotated.Token(ctx, "up"); err != nil || tok != before {
		t.Fatalf("token under [new, old] keys: %v", err)
	}
	n, err := rotated.Reencrypt(ctx)
	if err != nil || n != 1 {
		t.Fatalf("reencrypt = %d, %v; want 1", n, err)
	}
	ring, _ := upstreamauth.ParseKeys(next)
	if _, _, keyID, _ := e.state(t); keyID == nil || *keyID != ring.Primary() {
		t.Errorf("key id %v, want %s", keyID, ring.Primary())
	}
	if tok, err := e.manager(t, next).Token(ctx, "up"); err != nil || tok != before {
		t.Errorf("token under the new key alone: %v", err)
	}
	if _, err := old.Token(ctx, "up"); !errors.As(err, new(*upstreamauth.KeyMissingError)) {
		t.Errorf("token under the old key alone: %v, want *KeyMissingError", err)
	}
	if n, err := rotated.Reencrypt(ctx); err != nil || n != 0 {
		t.Errorf("second reencrypt = %d, %v; want 0", n, err)
	}
}

// TestNoKeys: without TOOLGATE_SECRET_KEYS an OAuth source can be neither authorized nor
// used, with an error that says what to set.
func TestNoKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, `{}`)
	m := e.manager(t, "")
	if _, err := m.Start(ctx, "up", upstreamauth.StartRequest{}); !errors.As(err, new(*upstreamauth.KeysMissingError)) ||
		!strings.Contains(err.Error(), "TOOLGATE_SECRET_KEYS") {
		t.Errorf("start: %v", err)
	}
	if _, err := e.call(ctx, m); !errors.As(err, new(*upstreamauth.KeysMissingError)) {
		t.Errorf("call: %v", err)
	}
	if _, err := e.call(ctx, nil); !errors.Is(err, mcpclient.ErrNoAuthorizer) {
		t.Errorf("call without an authorizer: %v", err)
	}
}

// TestParseKeys: keys are 32 bytes of base64; a wrong one is refused without being quoted.
func TestParseKeys(t *testing.T) {
	t.Parallel()
	if k, err := upstreamauth.ParseKeys(""); k != nil || err != nil {
		t.Errorf("empty: %v %v", k, err)
	}
	for _, bad := range []string{"short", "bm90IDMyIGJ5dGVz", upstreamauth.NewKey() + ",x"} {
		if _, err := upstreamauth.ParseKeys(bad); err == nil || strings.Contains(err.Error(), bad) {
			t.Errorf("ParseKeys(%q) = %v, want an error that does not quote it", bad, err)
		}
	}
	k := upstreamauth.NewKey()
	if _, err := upstreamauth.ParseKeys(k + "," + k); err == nil {
		t.Error("a key listed twice is accepted")
	}
	ring, err := upstreamauth.ParseKeys(k)
	if err != nil {
		t.Fatal(err)
	}
	id, sealed := ring.Seal([]byte("secret"), []byte("row 1"))
	if _, err := ring.Open(id, sealed, []byte("row 2")); err == nil {
		t.Error("a secret opens under another row's associated data")
	}
	if out, _ := json.Marshal(map[string]any{"k": ring.String()}); bytes.Contains(out, []byte(k)) {
		t.Error("the keyring prints its key")
	}
}

// TestRefreshServerDown: an authorization server that cannot be reached is not a refusal:
// the source stays authorized, a token not yet expired is still used, and an expired one
// fails the request until the server is back.
func TestRefreshServerDown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, `{}`)
	m := e.manager(t, e.keys)
	e.authorize(t, m, "")
	current, _, _ := m.SecretsOf(ctx, "up")
	if _, err := e.pool.Exec(ctx, `UPDATE source_oauth SET token_endpoint = 'http://127.0.0.1:1/token'`); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour - 30*time.Second) // within a minute of the expiry: a refresh is due
	if tok, err := m.Token(ctx, "up"); err != nil || tok != current {
		t.Fatalf("token before expiry, server down: %v", err)
	}
	e.clock.Advance(time.Minute)
	if _, err := m.Token(ctx, "up"); !errors.As(err, new(*upstreamauth.UnavailableError)) {
		t.Fatalf("token after expiry, server down: %v, want *UnavailableError", err)
	}
	if state, _, keyID, _ := e.state(t); state != upstreamauth.StateAuthorized || keyID == nil {
		t.Errorf("state %q, tokens kept %t; want authorized with its tokens", state, keyID != nil)
	}
}
