package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-jose/go-jose/v4/jwt"
)

// Introspection is how tokens that are not JWTs (opaque access tokens) are checked: at the
// introspection endpoint (RFC 7662) of one trusted issuer, which toolgate calls as a client
// of its own. An opaque token is sent to that issuer only, never to the others.
type Introspection struct {
	// Issuer is the issuer (one of Settings.Issuers) whose introspection endpoint, read
	// from its metadata, checks opaque tokens; "" refuses them.
	Issuer string
	// ClientID and ClientSecret authenticate toolgate to it (client_secret_basic).
	ClientID, ClientSecret string
}

// Enabled reports whether opaque tokens are introspected.
func (i Introspection) Enabled() bool { return i.Issuer != "" }

// introspection is what an introspection endpoint answers about a token (RFC 7662 §2.2).
type introspection struct {
	Active   bool             `json:"active"`
	Scope    string           `json:"scope"`
	ClientID string           `json:"client_id"`
	Subject  string           `json:"sub"`
	Issuer   string           `json:"iss"`
	Audience jwt.Audience     `json:"aud"`
	Expiry   *jwt.NumericDate `json:"exp"`
}

// introspect checks an opaque token at the introspection issuer: it must be active, of that
// issuer, for this resource, unexpired, and name a subject (its sub, else the client it was
// issued to: a client acting for itself). Each request asks the issuer again, so a token it
// revoked is refused at once.
func (v *Verifier) introspect(ctx context.Context, raw string) (*Token, error) {
	is := v.issuers[v.s.Introspection.Issuer]
	endpoint, err := is.introspectionEndpoint(ctx)
	if err != nil {
		return nil, err
	}
	var doc introspection
	extra, err := is.postIntrospection(ctx, endpoint, raw, &doc)
	if err != nil {
		is.log.ErrorContext(ctx, "oauth: the introspection endpoint did not answer; opaque tokens are refused until it does", "issuer", is.url, "err", err)
		return nil, &UnavailableError{Issuer: is.url, Err: err}
	}
	switch {
	case !doc.Active:
		return nil, &InvalidTokenError{"not active (introspection)"}
	case doc.Issuer != "" && doc.Issuer != is.url:
		return nil, &InvalidTokenError{fmt.Sprintf("introspection names issuer %q", doc.Issuer)}
	}
	c := jwt.Claims{Issuer: is.url, Subject: doc.Subject, Audience: doc.Audience, Expiry: doc.Expiry}
	if c.Subject == "" {
		c.Subject = doc.ClientID
	}
	if err := v.validate(&c); err != nil {
		return nil, err
	}
	t := &Token{Issuer: is.url, Subject: c.Subject, Scopes: strings.Fields(doc.Scope), Expiry: c.Expiry.Time()}
	if err := v.readClaims(t, extra); err != nil {
		return nil, err
	}
	return t, nil
}

// introspectionEndpoint is the issuer's introspection_endpoint, from its metadata (read
// once; a failed read is retried at most once per Settings.Refresh, as for its keys).
func (is *issuer) introspectionEndpoint(ctx context.Context) (string, error) {
	is.fetch.Lock()
	defer is.fetch.Unlock()
	is.mu.Lock()
	endpoint, read, readErr := is.introspectURI, is.mdRead, is.mdErr
	is.mu.Unlock()
	if endpoint != "" {
		return endpoint, nil
	}
	if !read.IsZero() && is.s.Now().Sub(read) < is.s.Refresh {
		return "", &UnavailableError{Issuer: is.url, Err: readErr}
	}
	md, err := is.discover(ctx)
	if err == nil && md.IntrospectionEndpoint == "" {
		err = errors.New("its metadata names no introspection_endpoint")
	}
	is.mu.Lock()
	defer is.mu.Unlock()
	is.mdRead, is.mdErr = is.s.Now(), err
	if err != nil {
		is.log.ErrorContext(ctx, "oauth: cannot read the introspection endpoint of an authorization server", "issuer", is.url, "err", err)
		return "", &UnavailableError{Issuer: is.url, Err: err}
	}
	is.introspectURI = md.IntrospectionEndpoint
	return is.introspectURI, nil
}

// postIntrospection asks endpoint about token, authenticated as the introspection client,
// and decodes the answer into doc, returning its members as well (for the sources claim).
// A redirect is not followed: it would carry the client's credentials and the token.
func (is *issuer) postIntrospection(ctx context.Context, endpoint, token string, doc *introspection) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	in := is.s.Introspection
	req.SetBasicAuth(url.QueryEscape(in.ClientID), url.QueryEscape(in.ClientSecret)) // RFC 6749 §2.3.1
	client := *is.s.Client
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("introspection: status %s", resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxDocumentBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxDocumentBytes {
		return nil, fmt.Errorf("introspection: over %d bytes", maxDocumentBytes)
	}
	if err := decodeJSON(data, doc); err != nil {
		return nil, fmt.Errorf("introspection: %w", err)
	}
	var extra map[string]any
	if err := decodeJSON(data, &extra); err != nil {
		return nil, fmt.Errorf("introspection: %w", err)
	}
	return extra, nil
}
