// Package httpguard refuses what a web page can make a visitor's browser send to toolgate:
// requests on behalf of a page of another origin, and DNS-rebinding requests, which reach a
// server on the visitor's machine under the attacker's own domain name. The REST API and
// the MCP endpoint share these checks.
package httpguard

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/internal/derrors"
)

// CrossOriginError is a request a browser sent for a page of another origin.
type CrossOriginError struct {
	Origin       string // the Origin header, when that is what gave it away
	SecFetchSite string // the Sec-Fetch-Site header, when that is
}

func (e *CrossOriginError) Error() string {
	if e.SecFetchSite != "" {
		return fmt.Sprintf("request sent by a browser for a page of another origin (Sec-Fetch-Site: %s): toolgate takes cross-origin requests only on its search routes, from the origins in TOOLGATE_CORS_ORIGINS (its console calls it from its own origin)", e.SecFetchSite)
	}
	return fmt.Sprintf("request sent by a browser for a page of another origin (Origin: %s): toolgate takes cross-origin requests only on its search routes, from the origins in TOOLGATE_CORS_ORIGINS (its console calls it from its own origin)", e.Origin)
}

func (e *CrossOriginError) Is(target error) bool { return target == derrors.Forbidden }
func (e *CrossOriginError) Code() string         { return "cross_origin" }

// CheckOrigin fails with a *CrossOriginError when r was sent by a browser for a page of
// another origin: its Sec-Fetch-Site is cross-site or same-site (another port of the same
// host is the same site), or its Origin is not the request's own host (an opaque origin,
// "null", never is). Every method is checked, GET included: the MCP specification asks
// servers to validate the Origin of every request. Requests without these headers, which
// only browsers add, pass: they come from programs, not pages.
func CheckOrigin(r *http.Request) error {
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none": // none: typed in the address bar, not sent by a page
	default:
		return &CrossOriginError{SecFetchSite: site}
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host) {
		return &CrossOriginError{Origin: origin}
	}
	return nil
}

// HostError is a request whose Host header is a name the server does not answer to.
type HostError struct {
	Host string
}

func (e *HostError) Error() string {
	return fmt.Sprintf("Host %q is refused: this server answers only to localhost and IP addresses (a page served under another name could be a DNS-rebinding attack)", e.Host)
}

func (e *HostError) Is(target error) bool { return target == derrors.Forbidden }
func (e *HostError) Code() string         { return "forbidden_host" }

// CheckRebindingHost fails with a *HostError unless the Host header of r is localhost or an
// IP address. A DNS-rebinding page reaches the server under a domain name its attacker
// controls, and that name is in the Host header; with an IP address or localhost the page's
// origin is the server itself.
func CheckRebindingHost(r *http.Request) error {
	host := hostname(r.Host)
	if strings.EqualFold(host, "localhost") || net.ParseIP(host) != nil {
		return nil
	}
	return &HostError{Host: r.Host}
}

// IsLoopback reports whether a host or host:port names the local machine.
func IsLoopback(hostport string) bool {
	host := hostname(hostport)
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostname is the host of a host or host:port, without the brackets of an IPv6 address.
func hostname(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

// Origins are the web origins whose pages may call toolgate's search routes from a browser
// (TOOLGATE_CORS_ORIGINS, docs/auth.md#browser-clients), each as ParseOrigin returns it.
type Origins []string

// Allows reports whether origin, an Origin header, is one of o.
func (o Origins) Allows(origin string) bool {
	norm, err := ParseOrigin(origin)
	return err == nil && slices.Contains(o, norm)
}

// ParseOrigin returns s as the Origin header of a page of that origin is sent:
// scheme://host[:port] in lower case, without the scheme's default port. It must be an https
// origin, or http on a loopback host (for development), with no path, query or credentials.
func ParseOrigin(s string) (string, error) {
	u, err := url.Parse(s)
	switch {
	case err != nil || u.Host == "" || u.Opaque != "":
		return "", fmt.Errorf("%q is not an origin: want scheme://host[:port], such as https://app.example.com", s)
	case u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		return "", fmt.Errorf("%q is not an origin: want scheme://host[:port] with no path, query or credentials", s)
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	switch {
	case scheme == "https":
		host = strings.TrimSuffix(host, ":443")
	case scheme == "http" && IsLoopback(host):
		host = strings.TrimSuffix(host, ":80")
	default:
		return "", fmt.Errorf("%q: want an https origin (http only on a loopback host)", s)
	}
	return scheme + "://" + host, nil
}
