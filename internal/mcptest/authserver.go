package mcptest

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// authServerModules is where scripts/test.sh installs oidc-provider (and the MCP
// TypeScript SDK), from the module's root.
const authServerModules = ".cache/oauth-as/node_modules"

//go:embed testdata/authserver.mjs
var authServerScript []byte

//go:embed testdata/oauthclient.mjs
var oauthClientScript []byte

// AuthServerConfig configures a test authorization server.
type AuthServerConfig struct {
	// Resources are the resource indicators (RFC 8707) it issues tokens for; the first is
	// the default of a request that names none.
	Resources []string `json:"resources"`
	// Scopes are the scopes it grants, space-separated; empty: toolgate's defaults.
	Scopes  string       `json:"scopes,omitempty"`
	Clients []AuthClient `json:"clients"`
	// OpaqueResources are resources (of Resources) whose access tokens are opaque strings,
	// checked at its introspection endpoint (RFC 7662), not JWTs.
	OpaqueResources []string `json:"opaqueResources,omitempty"`
	// AccessTokenTTL is the lifetime of its access tokens in seconds; 0: an hour.
	AccessTokenTTL int `json:"accessTokenTTL,omitempty"`
}

// AuthClient is a client registered with the authorization server.
type AuthClient struct {
	ID     string `json:"client_id"`
	Secret string `json:"client_secret"`
	// Claims are added to every access token issued to the client.
	Claims map[string]any `json:"claims,omitempty"`
	// RedirectURIs are the client's redirect URIs; empty: http://127.0.0.1/callback.
	RedirectURIs []string `json:"redirect_uris,omitempty"`
}

// AuthServer is a real OAuth 2.1 authorization server (oidc-provider, a certified OpenID
// provider, from npm) running in a node process for the test: discovery, JWKS, client
// credentials, authorization code with PKCE, dynamic client registration, JWT access
// tokens bound to a resource.
type AuthServer struct {
	// Issuer is its issuer identifier, http://127.0.0.1:PORT.
	Issuer string
	// Modules is the node_modules directory its packages come from.
	Modules string
}

// nodeTimeout bounds how long a test waits for a node process of this package to start (the
// authorization server) or to finish (the OAuth client): a process that hangs fails its test
// with its stderr instead of holding the suite until go test's own timeout.
const nodeTimeout = time.Minute

// StartAuthServer starts an authorization server for the test and stops it at its end.
// When oidc-provider is not installed the test is skipped (failed under RequireNPMEnv).
func StartAuthServer(t testing.TB, cfg AuthServerConfig) *AuthServer {
	t.Helper()
	modules := NodeModules(t)
	script := nodeScript(t, modules, "authserver.mjs", authServerScript)
	conf, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", script, string(conf))
	stdin, err := cmd.StdinPipe() // closed at cleanup: the server exits at the end of its input
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	type readLine struct {
		line string
		err  error
	}
	started := make(chan readLine, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadString('\n')
		started <- readLine{line, err}
	}()
	var line string
	select {
	case r := <-started:
		if r.err != nil {
			t.Fatalf("authorization server did not start: %v\n%s", r.err, stderr.String())
		}
		line = r.line
	case <-time.After(nodeTimeout):
		_ = cmd.Process.Kill() // the cleanup's Wait then returns
		t.Fatalf("authorization server did not say it was listening within %s\n%s", nodeTimeout, stderr.String())
	}
	var ready struct{ Issuer string }
	if err := json.Unmarshal([]byte(line), &ready); err != nil || ready.Issuer == "" {
		t.Fatalf("authorization server said %q, want {\"issuer\": ...}", line)
	}
	return &AuthServer{Issuer: ready.Issuer, Modules: modules}
}

// nodeScript writes a script where node resolves its imports from modules.
func nodeScript(t testing.TB, modules, name string, text []byte) string {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, name)
	if err := os.WriteFile(script, text, 0o600); err != nil {
		t.Fatal(err)
	}
	// node resolves the script's imports from the node_modules beside it
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return script
}

// OAuthClientResult is what the TypeScript SDK client did (RunOAuthClient).
type OAuthClientResult struct {
	Tools   []string // the names find_tools returned
	Called  string   // the text of call_tool's answer
	IsError bool     // whether call_tool answered an error
	// Resource and PKCE are the resource indicator and code challenge method of its
	// authorization request; Scope is the scope of the token it got.
	Resource, PKCE, Scope string
}

// RunOAuthClient runs the MCP TypeScript SDK's client against the MCP endpoint mcpURL
// protected by OAuth: from the first 401 through discovery, dynamic registration and the
// authorization code flow with PKCE to find_tools(query) and call_tool(tool). The test
// fails when the client does.
func RunOAuthClient(t testing.TB, modules, mcpURL, query, tool string) OAuthClientResult {
	t.Helper()
	script := nodeScript(t, modules, "oauthclient.mjs", oauthClientScript)
	var stderr strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), nodeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script, mcpURL, query, tool)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("TypeScript SDK client: %v\n%s", err, stderr.String())
	}
	var res OAuthClientResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("TypeScript SDK client printed %q: %v", out, err)
	}
	return res
}

// NodeModules returns the absolute path of the node_modules holding oidc-provider and the
// MCP TypeScript SDK; the test is skipped when they are not installed (failed under
// RequireNPMEnv).
func NodeModules(t testing.TB) string {
	t.Helper()
	path, err := findInModule(filepath.Join(authServerModules, "oidc-provider", "package.json"))
	if err == nil {
		return filepath.Dir(filepath.Dir(path))
	}
	msg := fmt.Sprintf("%v: oidc-provider is not installed; `make test` (scripts/test.sh) installs it", err)
	if os.Getenv(RequireNPMEnv) != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// ClientToken is an access token for resource with scope (space-separated; "" for none)
// by the client credentials grant.
func (a *AuthServer) ClientToken(t testing.TB, client AuthClient, resource, scope string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {client.ID}, "client_secret": {client.Secret}, "resource": {resource}}
	if scope != "" {
		form.Set("scope", scope)
	}
	resp, err := http.PostForm(a.Issuer+"/token", form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &tok) != nil || tok.AccessToken == "" {
		t.Fatalf("token request: %s %s", resp.Status, body)
	}
	return tok.AccessToken
}

// Rotate makes a new signing key sign from now on (the old one stays published) and
// returns its id.
func (a *AuthServer) Rotate(t testing.TB) string {
	t.Helper()
	resp, err := http.Post(a.Issuer+"/_rotate", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Kid string }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Kid == "" {
		t.Fatalf("rotate: %s %v", resp.Status, err)
	}
	return out.Kid
}

// ForgedToken is a well-formed access token claiming issuer iss and audience aud, signed
// (ES256) by a throwaway key named kid that no authorization server published.
func ForgedToken(t testing.TB, iss, kid, aud string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: key, KeyID: kid}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := jwt.Signed(signer).Claims(jwt.Claims{Issuer: iss, Subject: "someone", Audience: jwt.Audience{aud},
		Expiry: jwt.NewNumericDate(time.Now().Add(time.Hour))}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
