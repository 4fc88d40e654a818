package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/toolgate/toolgate/internal/oauth"
)

// SignIn plays an operator's browser from authURL at an AuthServer: it follows the
// redirects with its cookies, signs in and consents on the development forms, and returns
// the URL the authorization server finally sends the browser to, the first one starting
// with redirectPrefix (the client's callback with its code and state), without requesting it.
func SignIn(t testing.TB, authURL, redirectPrefix string) *url.URL {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	actionRE := regexp.MustCompile(`<form[^>]*action="([^"]+)"`)
	promptRE := regexp.MustCompile(`name="prompt" value="([^"]+)"`)
	next, err := url.Parse(authURL)
	if err != nil {
		t.Fatal(err)
	}
	var form url.Values
	for range 20 {
		var resp *http.Response
		if form != nil {
			resp, err = client.PostForm(next.String(), form)
			form = nil
		} else {
			resp, err = client.Get(next.String())
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); loc != "" {
			u, err := next.Parse(loc)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(u.String(), redirectPrefix) {
				return u
			}
			next = u
			continue
		}
		action, prompt := actionRE.FindSubmatch(body), promptRE.FindSubmatch(body)
		if resp.StatusCode != http.StatusOK || action == nil || prompt == nil {
			t.Fatalf("unexpected page %d at %s: %.500s", resp.StatusCode, next, body)
		}
		if next, err = next.Parse(string(action[1])); err != nil {
			t.Fatal(err)
		}
		form = url.Values{"prompt": {string(prompt[1])}}
		if string(prompt[1]) == "login" {
			form.Set("login", "alice")
			form.Set("password", "any")
		}
	}
	t.Fatal("no redirect to the callback after 20 steps")
	return nil
}

// ProtectedServer is a real MCP server (go-sdk, Streamable HTTP at /mcp) protected by an
// AuthServer as the MCP authorization specification asks: it answers 401 with
// WWW-Authenticate naming its Protected Resource Metadata (RFC 9728), which names the
// authorization server, and accepts only the access tokens that server issued for it,
// verified by toolgate's own verifier (internal/oauth). Its one tool, echo, answers its
// text argument.
type ProtectedServer struct {
	// URL is its MCP endpoint, http://127.0.0.1:PORT/mcp: the resource its tokens are for.
	URL string

	mu       sync.Mutex
	accepted []string // the tokens of the requests it served, in order
	reject   map[string]bool
	requests int
}

// NewProtectedServer serves a ProtectedServer on srv (unstarted, so that the caller knows its
// address before the authorization server starts) and starts it.
func NewProtectedServer(t testing.TB, srv *httptest.Server, issuer string) *ProtectedServer {
	t.Helper()
	base := "http://" + srv.Listener.Addr().String()
	p := &ProtectedServer{URL: base + "/mcp", reject: map[string]bool{}}
	verifier := oauth.NewVerifier(oauth.Settings{Issuers: []string{issuer}, Resource: base}, slog.New(slog.DiscardHandler))
	up := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	up.AddTool(&mcp.Tool{Name: "echo", Description: "Echo a text back", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Text string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + args.Text}}}, nil
		})
	metadataURL := base + "/.well-known/oauth-protected-resource/mcp"
	verify := func(ctx context.Context, token string, _ *http.Request) (*sdkauth.TokenInfo, error) {
		p.mu.Lock()
		p.requests++
		rejected := p.reject[token]
		p.mu.Unlock()
		if rejected {
			return nil, fmt.Errorf("%w: token withdrawn", sdkauth.ErrInvalidToken)
		}
		tok, err := verifier.Verify(ctx, token)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", sdkauth.ErrInvalidToken, err)
		}
		p.mu.Lock()
		p.accepted = append(p.accepted, token)
		p.mu.Unlock()
		return &sdkauth.TokenInfo{Scopes: tok.Scopes, Expiration: tok.Expiry, UserID: tok.Subject}, nil
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", sdkauth.RequireBearerToken(verify, &sdkauth.RequireBearerTokenOptions{ResourceMetadataURL: metadataURL})(
		mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil)))
	mux.Handle("/.well-known/oauth-protected-resource/mcp", sdkauth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: p.URL, AuthorizationServers: []string{issuer}, BearerMethodsSupported: []string{"header"}}))
	srv.Config.Handler = mux
	srv.Start()
	t.Cleanup(srv.Close)
	return p
}

// Reject makes the server refuse token from now on (401), as a server does with a token
// its authorization server withdrew.
func (p *ProtectedServer) Reject(token string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reject[token] = true
}

// Accepted are the tokens of the requests it served, in order.
func (p *ProtectedServer) Accepted() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.accepted)
}

// Requests counts the requests that brought a bearer token, served or refused.
func (p *ProtectedServer) Requests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests
}
