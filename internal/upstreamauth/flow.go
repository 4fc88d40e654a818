package upstreamauth

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/httpguard"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/sources"
)

// Token endpoint client authentication methods (RFC 7591 §2).
const (
	authNone  = "none"
	authBasic = "client_secret_basic"
	authPost  = "client_secret_post"
)

// secrets are what a row seals: never stored or shown in clear.
type secrets struct {
	AccessToken  string `json:"access_token,omitempty"`
	RefreshToken string `json:"refresh_token,omitempty"`
	ClientSecret string `json:"client_secret,omitempty"`
	CodeVerifier string `json:"code_verifier,omitempty"`
}

func sourceAAD(sourceID int64) []byte { return fmt.Appendf(nil, "toolgate source_oauth %d", sourceID) }
func pendingAAD(stateHash []byte) []byte {
	return fmt.Appendf(nil, "toolgate source_oauth_pending %x", stateHash)
}

func (m *Manager) seal(s secrets, aad []byte) (string, []byte) {
	plain, _ := json.Marshal(s) // a struct of strings always marshals
	return m.s.Keys.Seal(plain, aad)
}

func (m *Manager) open(keyID *string, sealed, aad []byte) (secrets, error) {
	var s secrets
	if keyID == nil {
		return s, nil
	}
	plain, err := m.s.Keys.Open(*keyID, sealed, aad)
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(plain, &s)
}

// oauthSource reads the mcp_http source called name configured for OAuth.
func (m *Manager) oauthSource(ctx context.Context, name string) (db.Source, mcpclient.Config, error) {
	src, err := sources.ByName(ctx, db.New(m.pool), name)
	if err != nil {
		return src, mcpclient.Config{}, err
	}
	cfg, err := mcpclient.ParseConfig(src.Config)
	if err != nil {
		return src, cfg, err
	}
	if src.Kind != mcpclient.KindHTTP || cfg.OAuth == nil {
		return src, cfg, &NotOAuthSourceError{Source: name}
	}
	return src, cfg, nil
}

// Start is an authorization an operator began.
type Start struct {
	// AuthorizationURL is where the operator's browser goes to sign in and consent.
	AuthorizationURL string    `json:"authorization_url"`
	ExpiresAt        time.Time `json:"expires_at"`
	// Issuer is the authorization server found; Registered tells whether toolgate
	// registered itself there as a client (dynamic registration) for this authorization.
	Issuer     string `json:"issuer"`
	Registered bool   `json:"registered"`
}

// StartRequest is what an operator gives to authorize a source.
type StartRequest struct {
	// ClientSecret is the secret of the source's pre-registered client (oauth.client_id),
	// when it has one; stored sealed.
	ClientSecret string
	// StartedBy names the caller, recorded with the pending authorization.
	StartedBy string
}

// Start begins the authorization of the source called name: it finds the authorization
// server of its server, registers toolgate there unless the source names a pre-registered
// client, and records a pending authorization under a fresh state, which only the callback
// of this authorization consumes, once, before Settings.PendingTTL.
func (m *Manager) Start(ctx context.Context, name string, req StartRequest) (Start, error) {
	if m.s.Keys == nil {
		return Start{}, &KeysMissingError{}
	}
	if m.s.PublicURL == "" {
		return Start{}, &PublicURLMissingError{}
	}
	src, cfg, err := m.oauthSource(ctx, name)
	if err != nil {
		return Start{}, err
	}
	if req.ClientSecret != "" && cfg.OAuth.ClientID == "" {
		return Start{}, &AuthorizationError{Step: "client", Msg: "client_secret is for a source with oauth.client_id"}
	}
	d, err := m.discover(ctx, cfg)
	if err != nil {
		return Start{}, err
	}
	redirect := m.s.PublicURL + CallbackPath
	cl := client{id: cfg.OAuth.ClientID, secret: req.ClientSecret, method: authNone, tokenURL: d.asm.TokenEndpoint}
	registered := false
	switch {
	case cl.id != "":
		if cl.secret != "" {
			cl.method = pickMethod(d.asm.TokenEndpointAuthMethodsSupported)
		}
	case d.asm.RegistrationEndpoint != "":
		if cl, err = m.register(ctx, d, redirect); err != nil {
			return Start{}, err
		}
		registered = true
	default:
		return Start{}, &AuthorizationError{Step: "client registration",
			Msg: fmt.Sprintf("the authorization server %s offers no dynamic client registration: register toolgate there "+
				"(redirect URI %s) and set the source's oauth.client_id", d.asm.Issuer, redirect)}
	}
	state := rand.Text()
	verifier := oauth2.GenerateVerifier()
	oc := oauth2.Config{ClientID: cl.id, Endpoint: oauth2.Endpoint{AuthURL: d.asm.AuthorizationEndpoint}, RedirectURL: redirect}
	if d.scope != "" {
		oc.Scopes = strings.Fields(d.scope)
	}
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", d.resource)}
	if slices.Contains(oc.Scopes, "offline_access") {
		// OpenID Connect §11: offline_access is granted only with the consent prompt
		opts = append(opts, oauth2.SetAuthURLParam("prompt", "consent"))
	}
	authURL := oc.AuthCodeURL(state, opts...)
	hash := sha256.Sum256([]byte(state))
	keyID, sealed := m.seal(secrets{ClientSecret: cl.secret, CodeVerifier: verifier}, pendingAAD(hash[:]))
	expires := m.s.Now().Add(m.s.PendingTTL)
	q := db.New(m.pool)
	if _, err := q.DeleteExpiredSourceOAuthPending(ctx); err != nil {
		return Start{}, err
	}
	err = q.InsertSourceOAuthPending(ctx, db.InsertSourceOAuthPendingParams{StateHash: hash[:], SourceID: src.ID,
		Issuer: d.asm.Issuer, TokenEndpoint: d.asm.TokenEndpoint, RevocationEndpoint: d.asm.RevocationEndpoint,
		ClientID: cl.id, TokenAuthMethod: cl.method, Resource: d.resource, Scope: d.scope, RedirectUri: redirect,
		KeyID: keyID, Secret: sealed, StartedBy: req.StartedBy, ExpiresAt: expires})
	if err != nil {
		return Start{}, err
	}
	m.log.InfoContext(ctx, "upstreamauth: authorization started", "source", name, "issuer", d.asm.Issuer,
		"registered", registered, "by", req.StartedBy)
	return Start{AuthorizationURL: authURL, ExpiresAt: expires, Issuer: d.asm.Issuer, Registered: registered}, nil
}

// pickMethod is how a client with a secret authenticates at a token endpoint supporting
// methods: HTTP Basic unless only the form parameters are offered (RFC 8414: absent means
// client_secret_basic).
func pickMethod(methods []string) string {
	if len(methods) > 0 && !slices.Contains(methods, authBasic) && slices.Contains(methods, authPost) {
		return authPost
	}
	return authBasic
}

// discovery is what Start found about a source's server.
type discovery struct {
	resource string // the resource indicator (RFC 8707): the server's protected resource
	scope    string
	asm      *oauthex.AuthServerMeta
}

// discover finds the authorization server of the source's server: the Protected Resource
// Metadata (RFC 9728) named by its 401 challenge or at its well-known paths, then the
// authorization server's metadata (RFC 8414 or OpenID discovery). Every endpoint is checked
// by checkEndpoint, and no redirect is followed.
func (m *Manager) discover(ctx context.Context, cfg mcpclient.Config) (discovery, error) {
	fail := func(msg string, err error) (discovery, error) {
		if err != nil {
			msg = strings.TrimPrefix(msg+": "+Sanitize(err.Error(), maxErrorLen), ": ")
		}
		return discovery{}, &AuthorizationError{Step: "discovery", Msg: msg, Err: err}
	}
	challenges := m.probe(ctx, cfg)
	var prm *oauthex.ProtectedResourceMetadata
	for _, c := range prmURLs(challengeParam(challenges, "resource_metadata"), cfg.URL) {
		p, err := oauthex.GetProtectedResourceMetadata(ctx, c.url, c.resource, m.s.Client)
		if err == nil && p != nil {
			prm = p
			break
		}
	}
	d := discovery{resource: cfg.URL}
	issuer := ""
	if prm != nil {
		if len(prm.AuthorizationServers) == 0 {
			return fail("the server's protected resource metadata names no authorization server", nil)
		}
		d.resource, issuer = prm.Resource, prm.AuthorizationServers[0]
	} else {
		// Before RFC 9728 (MCP 2025-03-26), the server's origin was its authorization server.
		u, _ := url.Parse(cfg.URL)
		issuer = u.Scheme + "://" + u.Host
	}
	if err := checkEndpoint("authorization server", issuer); err != nil {
		return fail("", err)
	}
	asm, err := sdkauth.GetAuthServerMetadata(ctx, issuer, m.s.Client)
	if err != nil {
		return fail("metadata of authorization server "+Sanitize(issuer, 200), err)
	}
	if asm == nil {
		return fail("no metadata at the well-known paths of authorization server "+Sanitize(issuer, 200), nil)
	}
	if !slices.Contains(asm.CodeChallengeMethodsSupported, "S256") {
		return fail("the authorization server does not support PKCE with S256", nil)
	}
	for name, u := range map[string]string{"authorization_endpoint": asm.AuthorizationEndpoint, "token_endpoint": asm.TokenEndpoint,
		"revocation_endpoint": asm.RevocationEndpoint, "registration_endpoint": asm.RegistrationEndpoint} {
		if u == "" && (name == "revocation_endpoint" || name == "registration_endpoint") {
			continue
		}
		if err := checkEndpoint(name, u); err != nil {
			return fail("authorization server metadata", err)
		}
	}
	d.asm = asm
	d.scope = cfg.OAuth.Scope
	if d.scope == "" {
		d.scope = challengeParam(challenges, "scope")
	}
	if d.scope == "" && prm != nil {
		d.scope = strings.Join(prm.ScopesSupported, " ")
	}
	// A refresh token is what lets toolgate keep the source authorized without the
	// operator: ask for it where the server names the scope for it.
	if slices.Contains(asm.ScopesSupported, "offline_access") && !slices.Contains(strings.Fields(d.scope), "offline_access") {
		d.scope = strings.TrimSpace(d.scope + " offline_access")
	}
	return d, nil
}

// checkEndpoint is the rule for every URL an authorization server or a server's metadata
// gives toolgate to call or to send an operator to: absolute HTTPS, or HTTP to the loopback
// address only (httpguard.IsLoopback), without user info.
func checkEndpoint(name, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil {
		return fmt.Errorf("%s %q: want an absolute https:// URL", name, Sanitize(raw, 200))
	}
	if u.Scheme == "https" || (u.Scheme == "http" && httpguard.IsLoopback(u.Host)) {
		return nil
	}
	return fmt.Errorf("%s %q: want https:// (http:// only to the loopback address)", name, Sanitize(raw, 200))
}

// probe sends the source's server an unauthorized initialize request and returns the
// challenges of its 401, if any.
func (m *Manager) probe(ctx context.Context, cfg mcpclient.Config) []oauthex.Challenge {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"toolgate","version":"1"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.URL, strings.NewReader(body))
	if err != nil {
		return nil
	}
	for k, v := range cfg.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := m.s.Client.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusUnauthorized {
		return nil
	}
	cs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	return cs
}

func challengeParam(cs []oauthex.Challenge, name string) string {
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "bearer") && c.Params[name] != "" {
			return c.Params[name]
		}
	}
	return ""
}

type prmURL struct{ url, resource string }

// prmURLs are where a server's Protected Resource Metadata may be, in the order the MCP
// specification gives: the challenge's, at the endpoint's path, at the root.
func prmURLs(fromChallenge, resource string) []prmURL {
	var out []prmURL
	if fromChallenge != "" {
		out = append(out, prmURL{fromChallenge, resource})
	}
	u, err := url.Parse(resource)
	if err != nil {
		return out
	}
	atPath := *u
	atPath.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(u.Path, "/")
	atPath.RawQuery = ""
	root := *u
	root.Path, root.RawQuery = "/.well-known/oauth-protected-resource", ""
	return append(out, prmURL{atPath.String(), resource}, prmURL{root.String(), u.Scheme + "://" + u.Host})
}

// register registers toolgate as a client of the authorization server (RFC 7591).
func (m *Manager) register(ctx context.Context, d discovery, redirect string) (client, error) {
	method := pickMethod(d.asm.TokenEndpointAuthMethodsSupported)
	if len(d.asm.TokenEndpointAuthMethodsSupported) > 0 && !slices.Contains(d.asm.TokenEndpointAuthMethodsSupported, method) {
		method = authNone
	}
	res, err := oauthex.RegisterClient(ctx, d.asm.RegistrationEndpoint, &oauthex.ClientRegistrationMetadata{
		RedirectURIs: []string{redirect}, TokenEndpointAuthMethod: method, ClientName: "toolgate",
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"}, Scope: d.scope,
	}, m.s.Client)
	if err != nil {
		return client{}, &AuthorizationError{Step: "dynamic client registration", Msg: registrationFailure(err), Err: err}
	}
	cl := client{id: res.ClientID, secret: res.ClientSecret, method: res.TokenEndpointAuthMethod, tokenURL: d.asm.TokenEndpoint}
	switch {
	case cl.secret == "":
		cl.method = authNone
	case cl.method != authPost:
		cl.method = authBasic
	}
	return cl, nil
}

// registrationFailure says why a registration failed: the server's error code and
// description, or the failure without the answer's body (a 2xx answer that does not decode
// may hold a client secret).
func registrationFailure(err error) string {
	var re *oauthex.ClientRegistrationError
	switch {
	case errors.As(err, &re):
		msg := "the registration endpoint refused: " + Sanitize(re.ErrorCode, 64)
		if re.ErrorDescription != "" {
			msg += " (" + Sanitize(re.ErrorDescription, 200) + ")"
		}
		return msg
	case strings.Contains(err.Error(), "successful registration response"):
		return "the registration endpoint's answer is not a client registration"
	}
	return Sanitize(err.Error(), maxErrorLen)
}

// Finish completes the authorization whose callback brought state and code (or the
// authorization server's error): the pending authorization is consumed whatever happens
// next, the code exchanged with its PKCE verifier, and the tokens stored sealed. It returns
// the source's name.
func (m *Manager) Finish(ctx context.Context, state, code, errCode, errDescription string) (string, error) {
	if m.s.Keys == nil {
		return "", &KeysMissingError{}
	}
	hash := sha256.Sum256([]byte(state))
	q := db.New(m.pool)
	p, err := q.TakeSourceOAuthPending(ctx, hash[:])
	if errors.Is(err, pgx.ErrNoRows) || state == "" {
		return "", &UnknownStateError{}
	}
	if err != nil {
		return "", err
	}
	if !m.s.Now().Before(p.ExpiresAt) {
		return "", &UnknownStateError{Expired: true}
	}
	src, err := q.GetSourceByID(ctx, p.SourceID)
	if err != nil {
		return "", err
	}
	if errCode != "" {
		msg := "the authorization server refused: " + Sanitize(errCode, 64)
		if errDescription != "" {
			msg += " (" + Sanitize(errDescription, 200) + ")"
		}
		return src.Name, &AuthorizationError{Step: "authorization", Msg: msg}
	}
	if code == "" {
		return src.Name, &AuthorizationError{Step: "authorization", Msg: "the callback has no code"}
	}
	sec, err := m.open(&p.KeyID, p.Secret, pendingAAD(hash[:]))
	if err != nil {
		return src.Name, err
	}
	cl := client{id: p.ClientID, secret: sec.ClientSecret, method: p.TokenAuthMethod, tokenURL: p.TokenEndpoint}
	tok, err := m.tokenRequest(ctx, cl, url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"redirect_uri": {p.RedirectUri}, "code_verifier": {sec.CodeVerifier}, "resource": {p.Resource}})
	if err != nil {
		return src.Name, &AuthorizationError{Step: "code exchange", Msg: err.Error(), Err: err}
	}
	keyID, sealed := m.seal(secrets{AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken, ClientSecret: sec.ClientSecret}, sourceAAD(src.ID))
	_, err = q.StoreSourceOAuthTokens(ctx, db.StoreSourceOAuthTokensParams{SourceID: src.ID, Issuer: p.Issuer,
		TokenEndpoint: p.TokenEndpoint, RevocationEndpoint: p.RevocationEndpoint, ClientID: p.ClientID,
		TokenAuthMethod: p.TokenAuthMethod, Resource: p.Resource, Scope: tok.scopeOr(p.Scope), KeyID: &keyID, Secret: sealed,
		ExpiresAt: tok.expiry(m.s.Now())})
	if err != nil {
		return src.Name, err
	}
	m.log.InfoContext(ctx, "upstreamauth: source authorized", "source", src.Name, "issuer", p.Issuer,
		"refresh_token", tok.RefreshToken != "")
	return src.Name, nil
}

// client is how toolgate authenticates at a token endpoint.
type client struct {
	id, secret, method, tokenURL string
}

// post is a POST of form to endpoint (the token or the revocation endpoint), authenticated
// as the client by its method: the secret in the form (client_secret_post), HTTP Basic
// (client_secret_basic), or the client id alone (none, a public client).
func (cl client) post(ctx context.Context, endpoint string, form url.Values) (*http.Request, error) {
	switch cl.method {
	case authPost:
		form.Set("client_id", cl.id)
		form.Set("client_secret", cl.secret)
	case authBasic:
	default:
		form.Set("client_id", cl.id)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if cl.method == authBasic {
		// RFC 6749 §2.3.1: both form-encoded before Basic
		req.SetBasicAuth(url.QueryEscape(cl.id), url.QueryEscape(cl.secret))
	}
	return req, nil
}

// tokenResponse is a token endpoint's answer (RFC 6749 §5).
type tokenResponse struct {
	AccessToken      string `json:"access_token"`
	TokenType        string `json:"token_type"`
	RefreshToken     string `json:"refresh_token"`
	ExpiresIn        int64  `json:"expires_in"`
	Scope            string `json:"scope"`
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
}

func (t *tokenResponse) expiry(now time.Time) *time.Time {
	if t.ExpiresIn <= 0 {
		return nil
	}
	e := now.Add(time.Duration(t.ExpiresIn) * time.Second)
	return &e
}

func (t *tokenResponse) scopeOr(requested string) string {
	if t.Scope != "" {
		return Sanitize(t.Scope, 1000)
	}
	return requested
}

// GrantError is a token endpoint's refusal (RFC 6749 §5.2): the grant is no good, and
// sending it again will not change that.
type GrantError struct {
	Status      int
	Code        string // the error code, sanitized
	Description string // sanitized and bounded
}

func (e *GrantError) Error() string {
	msg := fmt.Sprintf("the token endpoint refused (%d %s)", e.Status, e.Code)
	if e.Description != "" {
		msg += ": " + e.Description
	}
	return msg
}

// tokenRequest posts form to the client's token endpoint, authenticated as the client. A
// refusal is a *GrantError, a failure to get an answer (the network, a 5xx) an
// *UnavailableError.
func (m *Manager) tokenRequest(ctx context.Context, cl client, form url.Values) (*tokenResponse, error) {
	if form.Get("resource") == "" {
		form.Del("resource")
	}
	req, err := cl.post(ctx, cl.tokenURL, form)
	if err != nil {
		return nil, err
	}
	resp, err := m.s.Client.Do(req)
	if err != nil {
		return nil, &UnavailableError{Err: errors.New(Sanitize(err.Error(), maxErrorLen))}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil || len(body) > maxResponseBytes {
		return nil, &UnavailableError{Err: errors.New("the token endpoint's answer could not be read")}
	}
	if resp.StatusCode >= 500 {
		return nil, &UnavailableError{Err: fmt.Errorf("the token endpoint answered %d", resp.StatusCode)}
	}
	var tok tokenResponse
	decodeErr := json.Unmarshal(bytes.TrimSpace(body), &tok)
	if resp.StatusCode != http.StatusOK {
		return nil, &GrantError{Status: resp.StatusCode, Code: Sanitize(tok.Error, 64), Description: Sanitize(tok.ErrorDescription, 200)}
	}
	if decodeErr != nil || tok.AccessToken == "" {
		return nil, &GrantError{Status: resp.StatusCode, Code: "invalid_response", Description: "the answer holds no access_token"}
	}
	if tok.TokenType != "" && !strings.EqualFold(tok.TokenType, "bearer") {
		return nil, &GrantError{Status: resp.StatusCode, Code: "invalid_response", Description: "token_type " + Sanitize(tok.TokenType, 32) + " is not Bearer"}
	}
	return &tok, nil
}
