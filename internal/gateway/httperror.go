package gateway

import (
	"bytes"
	"net/http"
	"strings"
)

// HTTPError is a request the MCP endpoint refused over HTTP, before or instead of any MCP
// message: nothing was written. The API writes it as {"error":{"code","message"}}.
type HTTPError struct {
	Status int
	// Code is the error code; "" leaves it to the writer to derive one from Status (the
	// SDK transport's refusals carry none).
	Code    string
	Message string
	// Err is the cause: a check's typed error (httpguard), or an internal failure, which
	// is logged and not shown.
	Err error
}

// Error is the message and the cause. A 5xx's cause is internal: show a client only the
// status text, and log Error.
func (e *HTTPError) Error() string {
	switch {
	case e.Message != "" && e.Err != nil:
		return e.Message + ": " + e.Err.Error()
	case e.Message != "":
		return e.Message
	case e.Err != nil:
		return e.Err.Error()
	}
	return http.StatusText(e.Status)
}

func (e *HTTPError) Unwrap() error { return e.Err }

// maxRefusal bounds the plain-text refusal kept from the SDK transport.
const maxRefusal = 4 << 10

// refusalCatcher passes the SDK transport's answer through, except a refusal it writes
// with http.Error (a plain-text body with a status of 400 or more), which it keeps instead
// so that Serve returns it as an *HTTPError.
type refusalCatcher struct {
	http.ResponseWriter
	wrote  bool // a status or body has gone through: nothing is caught any more
	status int  // the caught refusal's status, 0 when none
	body   bytes.Buffer
}

func (c *refusalCatcher) WriteHeader(status int) {
	if !c.wrote && status >= http.StatusBadRequest && strings.HasPrefix(c.Header().Get("Content-Type"), "text/plain") {
		c.status = status
		c.Header().Del("Content-Type")
		c.Header().Del("X-Content-Type-Options")
		return
	}
	c.wrote = true
	c.ResponseWriter.WriteHeader(status)
}

func (c *refusalCatcher) Write(b []byte) (int, error) {
	if c.status != 0 {
		if room := maxRefusal - c.body.Len(); room > 0 {
			c.body.Write(b[:min(len(b), room)])
		}
		return len(b), nil
	}
	c.wrote = true
	return c.ResponseWriter.Write(b)
}

// Flush keeps the SDK's event streams flowing (it flushes through http.ResponseController).
func (c *refusalCatcher) Flush() {
	if c.status == 0 {
		c.wrote = true
		_ = http.NewResponseController(c.ResponseWriter).Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer (deadlines and the like).
func (c *refusalCatcher) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// serveTransport runs the SDK transport t on r and returns its plain-text refusal, if it
// made one, as an *HTTPError.
func serveTransport(t http.Handler, w http.ResponseWriter, r *http.Request) error {
	c := &refusalCatcher{ResponseWriter: w}
	t.ServeHTTP(c, r)
	if c.status == 0 {
		return nil
	}
	return &HTTPError{Status: c.status, Message: strings.TrimSpace(c.body.String())}
}
