package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// issuer is one trusted authorization server: its metadata and its cached key set.
type issuer struct {
	url string
	s   *Settings
	log *slog.Logger

	// fetch serializes reads of the metadata and keys, so that a burst of tokens naming a
	// new key reads the key set once.
	fetch sync.Mutex

	mu      sync.Mutex
	jwksURI string             // from the metadata; "" until it was read
	set     jose.JSONWebKeySet // the keys last read
	read    time.Time          // when the keys were last read, or their reading failed
	readErr error              // why the last reading failed; nil when it succeeded

	// the introspection endpoint (introspect.go), when it introspects opaque tokens
	introspectURI string    // from the metadata; "" until it was read
	mdRead        time.Time // when the metadata was last read for it, or its reading failed
	mdErr         error     // why that reading failed
}

// keys returns the keys that may have signed a token naming kid ("" when the token names
// none: every key). A kid missing from the cached set reads the set again, unless it was
// read less than Settings.Refresh ago.
func (is *issuer) keys(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	if ks, ok := is.cached(kid); ok {
		return ks, nil
	}
	is.fetch.Lock()
	defer is.fetch.Unlock()
	// another request may have read the set while this one waited
	if ks, ok := is.cached(kid); ok {
		return ks, nil
	}
	is.mu.Lock()
	recent := !is.read.IsZero() && is.s.Now().Sub(is.read) < is.s.Refresh
	lastErr := is.readErr
	is.mu.Unlock()
	if recent {
		if lastErr != nil {
			return nil, &UnavailableError{Issuer: is.url, Err: lastErr}
		}
		return nil, &InvalidTokenError{fmt.Sprintf("signing key %q is not among the issuer's keys", kid)}
	}
	set, err := is.readKeys(ctx)
	is.mu.Lock()
	is.read = is.s.Now()
	is.readErr = err
	if err == nil {
		is.set = set
	}
	is.mu.Unlock()
	if err != nil {
		is.log.ErrorContext(ctx, "oauth: cannot read the keys of an authorization server; its tokens are refused until they can be read",
			"issuer", is.url, "err", err)
		return nil, &UnavailableError{Issuer: is.url, Err: err}
	}
	if ks, ok := is.cached(kid); ok {
		return ks, nil
	}
	return nil, &InvalidTokenError{fmt.Sprintf("signing key %q is not among the issuer's keys", kid)}
}

// cached returns the cached keys of kid, false when there are none.
func (is *issuer) cached(kid string) ([]jose.JSONWebKey, bool) {
	is.mu.Lock()
	defer is.mu.Unlock()
	if kid == "" {
		return is.set.Keys, len(is.set.Keys) > 0
	}
	ks := is.set.Key(kid)
	return ks, len(ks) > 0
}

// readKeys reads the issuer's key set, reading its metadata first when it was not read.
func (is *issuer) readKeys(ctx context.Context) (jose.JSONWebKeySet, error) {
	is.mu.Lock()
	uri := is.jwksURI
	is.mu.Unlock()
	if uri == "" {
		md, err := is.discover(ctx)
		if err != nil {
			return jose.JSONWebKeySet{}, err
		}
		uri = md.JWKSURI
		is.mu.Lock()
		is.jwksURI = uri
		is.mu.Unlock()
	}
	var set jose.JSONWebKeySet
	if err := is.getJSON(ctx, uri, &set); err != nil {
		return set, fmt.Errorf("key set: %w", err)
	}
	for _, k := range set.Keys {
		if !k.IsPublic() {
			return jose.JSONWebKeySet{}, errors.New("key set: it publishes a private or symmetric key")
		}
	}
	if len(set.Keys) == 0 {
		return set, errors.New("key set: no keys")
	}
	return set, nil
}

// ErrIssuerMismatch is metadata that names another issuer than the one it was read for:
// RFC 8414 §3.3 forbids using it, since it could make tokens of one issuer pass as another's.
var ErrIssuerMismatch = errors.New("metadata names another issuer")

// discover reads the issuer's metadata: RFC 8414's well-known URL first, then OpenID
// Connect Discovery's. The metadata must name the issuer exactly and a jwks_uri.
func (is *issuer) discover(ctx context.Context) (issuerMetadata, error) {
	u, err := url.Parse(is.url)
	if err != nil {
		return issuerMetadata{}, fmt.Errorf("issuer URL: %w", err)
	}
	path := strings.TrimSuffix(u.Path, "/")
	oauthURL := *u
	oauthURL.Path = "/.well-known/oauth-authorization-server" + path // RFC 8414 §3.1
	oidcURL := *u
	oidcURL.Path = path + "/.well-known/openid-configuration" // OpenID Connect Discovery §4
	var errs []error
	for _, mdURL := range []string{oauthURL.String(), oidcURL.String()} {
		var md issuerMetadata
		if err := is.getJSON(ctx, mdURL, &md); err != nil {
			errs = append(errs, fmt.Errorf("metadata %s: %w", mdURL, err))
			continue
		}
		if md.Issuer != is.url {
			return md, fmt.Errorf("metadata %s: %w: %q", mdURL, ErrIssuerMismatch, md.Issuer)
		}
		if md.JWKSURI == "" {
			return md, fmt.Errorf("metadata %s: no jwks_uri", mdURL)
		}
		return md, nil
	}
	return issuerMetadata{}, errors.Join(errs...)
}

// getJSON reads the JSON document at u into v.
func (is *issuer) getJSON(ctx context.Context, u string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := is.s.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %s", resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxDocumentBytes+1))
	if err != nil {
		return err
	}
	if len(data) > maxDocumentBytes {
		return fmt.Errorf("over %d bytes", maxDocumentBytes)
	}
	return decodeJSON(data, v)
}
