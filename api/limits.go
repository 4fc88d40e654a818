package api

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// Default limits of a request (Limits), documented in docs/auth.md#limits.
const (
	// DefaultMaxBodyBytes bounds a JSON body. The largest valid one, a search with its eight
	// variants of 2,000 characters and 100 source and tag filters, is some 60 KB in ASCII;
	// real ones are a few hundred bytes.
	DefaultMaxBodyBytes = 64 << 10
	// DefaultMaxCatalogBytes bounds a catalog pushed over HTTP (PUT /v1/sources/{name}/tools,
	// or the tools of POST /v1/sources): the catalog parser's own bound.
	DefaultMaxCatalogBytes = 64 << 20
	// DefaultMaxCatalogTools bounds the tools of one catalog pushed over HTTP: the same bound
	// as one listing of an MCP server (mcpclient.MaxTools). Applying 100,000 tools in one
	// request took minutes.
	DefaultMaxCatalogTools = 50_000
)

// Limits bound what one request may carry; a zero field takes its default.
type Limits struct {
	MaxBodyBytes    int64 // a JSON body (TOOLGATE_MAX_BODY_BYTES)
	MaxCatalogBytes int64 // a catalog body (TOOLGATE_MAX_CATALOG_BYTES)
	MaxCatalogTools int   // the tools of a catalog body (TOOLGATE_MAX_CATALOG_TOOLS)
	// KeySearchUnits are the search units a key may have in flight (fairShare,
	// TOOLGATE_KEY_SEARCH_UNITS).
	KeySearchUnits int
}

func (l Limits) withDefaults() Limits {
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if l.MaxCatalogBytes <= 0 {
		l.MaxCatalogBytes = DefaultMaxCatalogBytes
	}
	if l.MaxCatalogTools <= 0 {
		l.MaxCatalogTools = DefaultMaxCatalogTools
	}
	if l.KeySearchUnits <= 0 {
		l.KeySearchUnits = DefaultKeySearchUnits
	}
	return l
}

// catalogRoutes are the routes whose body may be a whole catalog; every other route takes
// at most a JSON body's limit.
var catalogRoutes = map[string]bool{
	http.MethodPut + " /v1/sources/:name/tools": true,
	http.MethodPost + " /v1/sources":            true,
}

// bodyLimitOf is the body limit of a route (method and Echo path).
func (l Limits) bodyLimitOf(method, path string) int64 {
	if catalogRoutes[method+" "+path] {
		return l.MaxCatalogBytes
	}
	return l.MaxBodyBytes
}

// limitBody bounds the body of every request by its route's limit before anything reads
// it: a Content-Length over the limit is refused at once (and the connection closed,
// trackBody), and any other body is cut at the
// limit (http.MaxBytesReader), so that no handler ever holds more than its limit in memory.
// /mcp is left to the gateway, which bounds its bodies itself.
func (s *Server) limitBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.Body == nil || r.Body == http.NoBody || c.Path() == "/mcp" {
			return next(c)
		}
		limit := s.limits.bodyLimitOf(r.Method, c.Path())
		if r.ContentLength > limit {
			return bodyTooLarge(r.Method, c.Path(), limit)
		}
		r.Body = http.MaxBytesReader(c.Response(), r.Body, limit)
		return next(c)
	}
}

// checkCatalogTools refuses a catalog body of more than the tools one request may bring:
// applying them runs in one transaction, and 100,000 tools held one for minutes.
func (s *Server) checkCatalogTools(n int) error {
	if n > s.limits.MaxCatalogTools {
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: "too_many_tools",
			Message: fmt.Sprintf("the catalog has %d tools; one request may bring at most %d (TOOLGATE_MAX_CATALOG_TOOLS)", n, s.limits.MaxCatalogTools)}
	}
	return nil
}

// readBody reads the request's body whole; past its route's limit (limitBody) it is 413
// body_too_large. A body that does not arrive in time (the server's read deadline,
// TOOLGATE_HTTP_READ_TIMEOUT) is 408 request_timeout, and one the client cut short is 400:
// both are the client's doing, not a failure of the server.
func readBody(c echo.Context) ([]byte, error) {
	body, err := io.ReadAll(c.Request().Body)
	if err == nil {
		return body, nil
	}
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, bodyTooLarge(c.Request().Method, c.Path(), tooLarge.Limit)
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return nil, &Error{Status: http.StatusRequestTimeout, Code: "request_timeout",
			Message: "the request body did not arrive in time (TOOLGATE_HTTP_READ_TIMEOUT)"}
	}
	return nil, badRequest("body could not be read: %v", err)
}

// bodyTooLarge is the 413 of a body over its route's limit; the message names the limit.
func bodyTooLarge(method, path string, limit int64) *Error {
	return &Error{Status: http.StatusRequestEntityTooLarge, Code: "body_too_large",
		Message: fmt.Sprintf("request body exceeds the limit of %s of %s %s", byteSize(limit), method, path)}
}

// byteSize writes n bytes in the largest binary unit that divides it, e.g. "64 KiB".
func byteSize(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d %s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// bodyKey is the echo.Context key of a request's trackedBody.
const bodyKey = "toolgate.body"

// trackedBody is a request body that knows whether it was read to its end.
type trackedBody struct {
	io.ReadCloser
	done bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.done = true
	}
	return n, err
}

// unreadGrace is how long the server still reads a refused body after its answer: enough
// for a body already on its way to arrive, so that closing does not reset the connection
// before the client has read the answer.
const unreadGrace = time.Second

// maxDiscard is net/http's own bound on the rest of a body it reads after the handler
// to reuse the connection (maxPostHandlerReadBytes); past it net/http closes at once.
const maxDiscard = 256 << 10

// trackBody notes whether each request's body is read to its end, so that an error answer
// to a request whose body was left unread closes the connection (closeUnread).
func trackBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			b := &trackedBody{ReadCloser: r.Body}
			r.Body = b
			c.Set(bodyKey, b)
			// net/http decides by the body's own type, when the answer is written, whether
			// the rest of the body is worth reading: an error answer (written after this
			// returns) must find it as net/http made it.
			defer func() { r.Body = b.ReadCloser }()
		}
		return next(c)
	}
}

// closeUnread closes the connection after an error answer to a request whose body, of a
// Content-Length up to maxDiscard, was not read to its end (trackBody), the body read for
// at most unreadGrace more. net/http would otherwise read the rest of such a body after the
// answer to reuse the connection, and wait for it until the read timeout when it never
// comes: a Content-Length refused from the header alone, with no body behind it, held its
// connection for TOOLGATE_HTTP_READ_TIMEOUT. A larger body net/http does not read (it
// closes at once); a chunked one is left to net/http, which reads up to maxDiscard of it
// (a stalled one, like any slow body, until the read timeout).
func closeUnread(c echo.Context) {
	b, ok := c.Get(bodyKey).(*trackedBody)
	if n := c.Request().ContentLength; !ok || b.done || n <= 0 || n > maxDiscard {
		return
	}
	c.Response().Header().Set(echo.HeaderConnection, "close")
	_ = http.NewResponseController(c.Response()).SetReadDeadline(time.Now().Add(unreadGrace))
}
