package upstreamauth

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/internal/db"
)

// Token is the access token of the source called name, refreshed first when it expires
// within Settings.RefreshBefore. A source that is not authorized is refused at once with a
// *NotAuthorizedError, without a request to anyone.
func (m *Manager) Token(ctx context.Context, name string) (string, error) {
	row, sec, err := m.authorized(ctx, name)
	if err != nil {
		return "", err
	}
	if row.ExpiresAt == nil || m.s.Now().Add(m.s.RefreshBefore).Before(*row.ExpiresAt) {
		return sec.AccessToken, nil
	}
	tok, err := m.refresh(ctx, name, row.SourceID, sec.AccessToken)
	var down *UnavailableError
	if errors.As(err, &down) && m.s.Now().Before(*row.ExpiresAt) {
		// the authorization server is down, but the token has not expired yet: use it
		return sec.AccessToken, nil
	}
	return tok, err
}

// Refresh is the access token to use instead of rejected, which the source's server refused
// with 401: the token stored now when another request refreshed it meanwhile, or a
// refreshed one.
func (m *Manager) Refresh(ctx context.Context, name, rejected string) (string, error) {
	row, sec, err := m.authorized(ctx, name)
	if err != nil {
		return "", err
	}
	if sec.AccessToken != rejected {
		return sec.AccessToken, nil
	}
	return m.refresh(ctx, name, row.SourceID, rejected)
}

// authorized reads the source's authorization and opens its secrets; a source without
// tokens is a *NotAuthorizedError.
func (m *Manager) authorized(ctx context.Context, name string) (db.SourceOauth, secrets, error) {
	if m.s.Keys == nil {
		return db.SourceOauth{}, secrets{}, &KeysMissingError{}
	}
	row, err := db.New(m.pool).GetSourceOAuthByName(ctx, name)
	if errors.Is(err, pgx.ErrNoRows) {
		return row, secrets{}, &NotAuthorizedError{Source: name, State: StateUnauthorized}
	}
	if err != nil {
		return row, secrets{}, err
	}
	if row.State != StateAuthorized || row.Secret == nil {
		reason := ""
		if row.Error != nil {
			reason = *row.Error
		}
		return row, secrets{}, &NotAuthorizedError{Source: name, State: row.State, Reason: reason}
	}
	sec, err := m.open(row.KeyID, row.Secret, sourceAAD(row.SourceID))
	return row, sec, err
}

// lockSource is the in-process lock of a source's refreshes: a burst of requests with an
// expired token refreshes once.
func (m *Manager) lockSource(id int64) *sync.Mutex {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.refreshs[id]
	if l == nil {
		l = &sync.Mutex{}
		m.refreshs[id] = l
	}
	l.Lock()
	return l
}

// refresh gets a new access token with the source's refresh token, unless another request
// of this process or of another one did since stale was read. The new tokens are written
// only over the generation the refresh started from; a refusal by the authorization server
// marks the source refresh_failed, and a failure to reach it leaves the source as it is.
// No connection is held while the authorization server is called.
func (m *Manager) refresh(ctx context.Context, name string, sourceID int64, stale string) (string, error) {
	defer m.lockSource(sourceID).Unlock()
	row, sec, err := m.authorized(ctx, name)
	if err != nil {
		return "", err
	}
	if sec.AccessToken != stale && (row.ExpiresAt == nil || m.s.Now().Add(m.s.RefreshBefore).Before(*row.ExpiresAt)) {
		return sec.AccessToken, nil
	}
	q := db.New(m.pool)
	if sec.RefreshToken == "" {
		return m.fail(ctx, q, name, row, errNoRefreshToken.Error())
	}
	cl := client{id: row.ClientID, secret: sec.ClientSecret, method: row.TokenAuthMethod, tokenURL: row.TokenEndpoint}
	tok, err := m.tokenRequest(ctx, cl, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {sec.RefreshToken},
		"resource": {row.Resource}})
	var grant *GrantError
	if errors.As(err, &grant) {
		return m.fail(ctx, q, name, row, "refresh refused: "+grant.Error())
	}
	if err != nil {
		m.log.WarnContext(ctx, "upstreamauth: refresh failed; the source stays authorized and the next request tries again",
			"source", name, "err", err)
		return "", err
	}
	next := secrets{AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken, ClientSecret: sec.ClientSecret}
	if next.RefreshToken == "" { // RFC 6749 §6: the old one stays good unless a new one is issued
		next.RefreshToken = sec.RefreshToken
	}
	keyID, sealed := m.seal(next, sourceAAD(sourceID))
	n, err := q.UpdateSourceOAuthTokens(ctx, db.UpdateSourceOAuthTokensParams{SourceID: sourceID, Generation: row.Generation,
		KeyID: &keyID, Secret: sealed, ExpiresAt: tok.expiry(m.s.Now()), Scope: tok.scopeOr(row.Scope)})
	if err != nil {
		return "", err
	}
	if n == 0 { // changed meanwhile (re-authorized, revoked, refreshed elsewhere): use what is stored
		_, cur, err := m.authorized(ctx, name)
		return cur.AccessToken, err
	}
	m.log.InfoContext(ctx, "upstreamauth: token refreshed", "source", name)
	return tok.AccessToken, nil
}

// fail marks the source refresh_failed with reason, unless its authorization changed since
// row was read (another process refreshed it, with the refresh token this one was refused,
// or an operator authorized it again): then the token stored now is the answer.
func (m *Manager) fail(ctx context.Context, q *db.Queries, name string, row db.SourceOauth, reason string) (string, error) {
	reason = Sanitize(reason, maxErrorLen)
	n, err := q.FailSourceOAuth(ctx, db.FailSourceOAuthParams{SourceID: row.SourceID, Generation: row.Generation, Error: &reason})
	if err != nil {
		return "", err
	}
	if n == 0 {
		_, cur, err := m.authorized(ctx, name)
		return cur.AccessToken, err
	}
	m.log.WarnContext(ctx, "upstreamauth: refresh refused; the source is marked refresh_failed until an admin authorizes it again",
		"source", name, "reason", reason)
	return "", &NotAuthorizedError{Source: name, State: StateRefreshFailed, Reason: reason}
}

// Revoked is what Revoke did.
type Revoked struct {
	// AtServer tells whether the authorization server's revocation endpoint took the
	// tokens; false when it advertises none or refused (Error says why).
	AtServer bool   `json:"revoked_at_server"`
	Error    string `json:"error,omitempty"`
}

// Revoke forgets the tokens of the source called name, after asking its authorization
// server to revoke them (RFC 7009) when it advertises a revocation endpoint. The tokens are
// deleted whatever the server answers.
func (m *Manager) Revoke(ctx context.Context, name string) (Revoked, error) {
	if m.s.Keys == nil {
		return Revoked{}, &KeysMissingError{}
	}
	src, _, err := m.oauthSource(ctx, name)
	if err != nil {
		return Revoked{}, err
	}
	q := db.New(m.pool)
	row, err := q.GetSourceOAuth(ctx, src.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return Revoked{}, nil
	}
	if err != nil {
		return Revoked{}, err
	}
	var out Revoked
	if sec, err := m.open(row.KeyID, row.Secret, sourceAAD(row.SourceID)); err != nil {
		out.Error = "the stored tokens do not open: " + err.Error()
	} else if row.RevocationEndpoint != "" && row.Secret != nil {
		cl := client{id: row.ClientID, secret: sec.ClientSecret, method: row.TokenAuthMethod, tokenURL: row.RevocationEndpoint}
		out.AtServer = true
		// The refresh token first: revoking it ends the grant. A self-contained (JWT) access
		// token may be one the server cannot revoke (unsupported_token_type, RFC 7009
		// §2.2.1); it expires on its own.
		for _, t := range []struct{ hint, tok string }{{"refresh_token", sec.RefreshToken}, {"access_token", sec.AccessToken}} {
			if t.tok == "" {
				continue
			}
			err := m.revokeAt(ctx, cl, t.tok, t.hint)
			var grant *GrantError
			if errors.As(err, &grant) && grant.Code == "unsupported_token_type" && t.hint == "access_token" {
				continue
			}
			if err != nil {
				out.AtServer, out.Error = false, err.Error()
				break
			}
		}
	}
	if err := q.RevokeSourceOAuth(ctx, src.ID); err != nil {
		return out, err
	}
	m.log.InfoContext(ctx, "upstreamauth: source's tokens revoked", "source", name, "at_server", out.AtServer)
	return out, nil
}

// revokeAt asks the revocation endpoint (in cl.tokenURL) to revoke tok.
func (m *Manager) revokeAt(ctx context.Context, cl client, tok, hint string) error {
	req, err := cl.post(ctx, cl.tokenURL, url.Values{"token": {tok}, "token_type_hint": {hint}})
	if err != nil {
		return err
	}
	resp, err := m.s.Client.Do(req)
	if err != nil {
		return errors.New("revocation endpoint unreachable: " + Sanitize(err.Error(), 200))
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	var e struct {
		Error string `json:"error"`
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&e)
	return &GrantError{Status: resp.StatusCode, Code: Sanitize(e.Error, 64), Description: "the revocation endpoint refused"}
}

// Reencrypt seals again under the primary key every secret sealed under another one, so
// that the others can leave TOOLGATE_SECRET_KEYS. It returns how many it re-sealed.
func (m *Manager) Reencrypt(ctx context.Context) (int, error) {
	if m.s.Keys == nil {
		return 0, &KeysMissingError{}
	}
	q := db.New(m.pool)
	primary := m.s.Keys.Primary()
	rows, err := q.ListSourceOAuthSealed(ctx, primary)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range rows {
		sec, err := m.open(r.KeyID, r.Secret, sourceAAD(r.SourceID))
		if err != nil {
			return n, err
		}
		keyID, sealed := m.seal(sec, sourceAAD(r.SourceID))
		done, err := q.ResealSourceOAuth(ctx, db.ResealSourceOAuthParams{SourceID: r.SourceID, Generation: r.Generation, KeyID: &keyID, Secret: sealed})
		if err != nil {
			return n, err
		}
		n += int(done) // 0: rewritten meanwhile, under the primary key
	}
	pending, err := q.ListSourceOAuthPendingSealed(ctx, primary)
	if err != nil {
		return n, err
	}
	for _, p := range pending {
		sec, err := m.open(&p.KeyID, p.Secret, pendingAAD(p.StateHash))
		if err != nil {
			return n, err
		}
		keyID, sealed := m.seal(sec, pendingAAD(p.StateHash))
		if err := q.ResealSourceOAuthPending(ctx, db.ResealSourceOAuthPendingParams{StateHash: p.StateHash, KeyID: keyID, Secret: sealed}); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
