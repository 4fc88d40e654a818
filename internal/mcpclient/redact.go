package mcpclient

import (
	"cmp"
	"errors"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Masked replaces a credential wherever toolgate shows a source's config or an error about it.
const Masked = "***"

// credentialParam matches the names of URL query parameters that carry credentials: API
// keys, tokens, signatures, passwords, session ids (api_key, access_token, X-Amz-Signature,
// sig, client_secret, auth, ...). A false positive only masks a harmless value in what an
// admin sees; the server is still called with the real URL.
var credentialParam = regexp.MustCompile(`(?i)(key|token|secret|pass|pwd|auth|sig|credential|session|jwt|bearer)`)

// Redacted is c as the API shows it: env and header values masked (they hold tokens and API
// keys), and in the URL the user info and the values of credential-looking query
// parameters. Commands and arguments are shown as they are.
func (c Config) Redacted() Config {
	out := c
	out.Env = maskValues(c.Env)
	out.Headers = maskValues(c.Headers)
	if c.URL != "" {
		out.URL = RedactURL(c.URL)
	}
	return out
}

func maskValues(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k := range m {
		out[k] = Masked
	}
	return out
}

// RedactURL masks the user info of a URL (a user name alone may be a token) and the values
// of its query and fragment parameters whose names look like credentials, keeping the rest
// as written. A value that does not parse as a URL is masked whole.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return Masked
	}
	// Put back by hand: url.URL would escape the mask as %2A%2A%2A.
	userinfo := ""
	if u.User != nil {
		userinfo = Masked + "@"
		if _, ok := u.User.Password(); ok {
			userinfo = Masked + ":" + Masked + "@"
		}
		u.User = nil
	}
	u.RawQuery = maskParams(u.RawQuery)
	if u.Fragment != "" {
		u.RawFragment = maskParams(u.EscapedFragment())
		u.Fragment, _ = url.PathUnescape(u.RawFragment)
	}
	out := u.String()
	if userinfo != "" {
		out = strings.Replace(out, "//", "//"+userinfo, 1)
	}
	return out
}

// maskParams masks the credential-looking values of a raw a=1&b=2 list, in place.
func maskParams(raw string) string {
	if raw == "" {
		return raw
	}
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		name, _, hasValue := strings.Cut(p, "=")
		if dec, err := url.QueryUnescape(name); err == nil {
			name = dec
		}
		if hasValue && credentialParam.MatchString(name) {
			parts[i] = p[:strings.IndexByte(p, '=')+1] + Masked
		}
	}
	return strings.Join(parts, "&")
}

// replacement is a text an error may hold and what it becomes.
type replacement struct{ old, new string }

// secrets are the texts of c that an error message may quote, with their masked forms.
// First the URL whole, as written and as net/http quotes it (the password replaced by
// ***), which becomes RedactURL's form; then each credential alone (header values, the
// URL's user name and password, its credential-looking parameter values, raw and encoded),
// which becomes ***. A stdio server's env values are left out: they reach only the child
// process, never an error text.
func (c Config) secrets() []replacement {
	var out []replacement
	add := func(s string) {
		// Very short values (a header "1", a user "me") would mask unrelated text; a URL
		// quoting them is still masked whole above.
		if len(s) >= 4 {
			out = append(out, replacement{s, Masked})
			if esc := url.QueryEscape(s); esc != s {
				out = append(out, replacement{esc, Masked})
			}
		}
	}
	for _, v := range c.Headers {
		add(v)
		// "Bearer <token>": the token alone may be quoted too.
		if _, tok, ok := strings.Cut(v, " "); ok {
			add(tok)
		}
	}
	if c.URL == "" {
		return out
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		return append(out, replacement{c.URL, Masked})
	}
	redacted := RedactURL(c.URL)
	out = append(out, replacement{c.URL, redacted}, replacement{u.String(), redacted})
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			quoted := strings.Replace(u.String(), u.User.String()+"@", u.User.Username()+":***@", 1)
			out = append(out, replacement{quoted, redacted})
		}
		add(u.User.Username())
		if pw, ok := u.User.Password(); ok {
			add(pw)
		}
	}
	for _, raw := range []string{u.RawQuery, u.EscapedFragment()} {
		for p := range strings.SplitSeq(raw, "&") {
			name, value, ok := strings.Cut(p, "=")
			if dec, err := url.QueryUnescape(name); err == nil {
				name = dec
			}
			if !ok || !credentialParam.MatchString(name) {
				continue
			}
			add(value)
			if dec, err := url.QueryUnescape(value); err == nil {
				add(dec)
			}
		}
	}
	return out
}

// Scrub returns err with its text free of c's credentials (see secrets), for errors that
// are recorded (a sync run, a River job) or logged. errors.Is and errors.As still see err.
func (c Config) Scrub(err error) error {
	if err == nil {
		return nil
	}
	secrets := c.secrets()
	if len(secrets) == 0 {
		return err
	}
	// Longest first: a text that contains another is replaced whole.
	slices.SortStableFunc(secrets, func(a, b replacement) int { return cmp.Compare(len(b.old), len(a.old)) })
	return &scrubbedError{err: err, secrets: secrets}
}

type scrubbedError struct {
	err     error
	secrets []replacement
}

func (e *scrubbedError) Error() string {
	msg := e.err.Error()
	for _, r := range e.secrets {
		msg = strings.ReplaceAll(msg, r.old, r.new)
	}
	return msg
}

func (e *scrubbedError) Unwrap() error { return e.err }

// ServerError returns the JSON-RPC error in err that the server itself answered. The go-sdk
// reports its own transport failures (a closed connection, an HTTP error status) as
// JSON-RPC errors too; those are not the server's answer and give false.
func ServerError(err error) (*jsonrpc.Error, bool) {
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) {
		return nil, false
	}
	switch rpcErr.Code {
	case codeClientClosing, codeServerClosing, codeRejected:
		return nil, false
	}
	return rpcErr, true
}
