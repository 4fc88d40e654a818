package api

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"syscall"

	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/internal/derrors"
	"github.com/toolgate/toolgate/internal/gateway"
	"github.com/toolgate/toolgate/internal/postgres"
)

// Error is an error a caller can act on; it is written as
// {"error": {"code": ..., "message": ..., "details": ...}} with Status.
type Error struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Details any    `json:"details,omitempty"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func badRequest(format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "invalid_request", Message: fmt.Sprintf(format, args...)}
}

// invalidText is an input that cannot be PostgreSQL text: a NUL character or invalid UTF-8.
func invalidText(format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "invalid_text", Message: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) *Error {
	return &Error{Status: http.StatusNotFound, Code: "not_found", Message: fmt.Sprintf(format, args...)}
}

func conflict(format string, args ...any) *Error {
	return &Error{Status: http.StatusConflict, Code: "conflict", Message: fmt.Sprintf(format, args...)}
}

// toAPIError maps any error to the one written to the client: an *Error a handler made
// itself, an error of a category (internal/derrors: the one mapping from categories and
// typed errors to status, code and message), the database being down, or the refusals of
// Echo and of the MCP transport. Anything else is an internal error whose details are
// only logged.
func toAPIError(err error) *Error {
	var (
		apiErr  *Error
		httpErr *echo.HTTPError
		mcpErr  *gateway.HTTPError
	)
	if errors.As(err, &apiErr) {
		return apiErr
	}
	if a, ok := derrors.Classify(err); ok {
		return &Error{Status: a.Status, Code: a.Code, Message: a.Message, Details: a.Details}
	}
	switch {
	case postgres.IsUnavailable(err):
		// The driver's error names the database server, its user and database: logged
		// (errorHandler), never sent.
		return &Error{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "the database is unavailable; try again shortly"}
	case errors.As(err, &mcpErr):
		if mcpErr.Status >= 500 {
			break // its cause is logged, not shown
		}
		return &Error{Status: mcpErr.Status, Code: cmp.Or(mcpErr.Code, codeOfStatus(mcpErr.Status)), Message: mcpErr.Error()}
	case errors.As(err, &httpErr):
		msg := http.StatusText(httpErr.Code)
		if m, ok := httpErr.Message.(string); ok {
			msg = m
		}
		return &Error{Status: httpErr.Code, Code: codeOfStatus(httpErr.Code), Message: msg}
	case connectionLost(err):
		return &Error{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "the database is unavailable; try again shortly"}
	}
	return &Error{Status: http.StatusInternalServerError, Code: "internal", Message: "internal error"}
}

// connectionLost reports whether err is a connection lost in the middle of an exchange:
// the server's end closed (io.ErrUnexpectedEOF, what pgx returns when a PostgreSQL backend
// is killed mid-query, as by the out-of-memory killer) or reset. It is an outage like the
// server refusing connections (postgres.IsUnavailable), not a failure of the request. By
// the time an error reaches toAPIError, every other source of such errors has typed it:
// a request body read (readBody: 400 or 408), a provider (derrors.Unavailable), an
// upstream MCP server (*gateway.HTTPError, matched before this); so what is left is the
// database's.
func connectionLost(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNABORTED)
}

// notReadyMessage is what the public /readyz says of a readiness failure: the reason,
// without the driver's words.
func notReadyMessage(err error) string {
	var nr *postgres.NotReadyError
	if errors.As(err, &nr) {
		return nr.Public()
	}
	return "database not ready"
}

// codeOfStatus is the code of an error that brings only its status: Echo's own (no route,
// a method not allowed) and the MCP transport's refusals.
func codeOfStatus(status int) string {
	switch {
	case status >= 500:
		return "internal"
	case status == http.StatusNotFound:
		return "not_found"
	case status == http.StatusMethodNotAllowed:
		return "method_not_allowed"
	case status == http.StatusNotAcceptable:
		return "not_acceptable"
	case status == http.StatusRequestEntityTooLarge:
		return "body_too_large"
	case status == http.StatusUnsupportedMediaType:
		return "unsupported_media_type"
	}
	return "invalid_request"
}

// errorHandler writes every error returned by a handler as JSON.
func errorHandler(log *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		apiErr := toAPIError(err)
		closeUnread(c)
		if apiErr.Status >= 500 {
			log.Error("request failed", "request_id", c.Response().Header().Get(echo.HeaderXRequestID),
				"method", c.Request().Method, "path", c.Path(), "err", err)
		}
		if c.Request().Method == http.MethodHead {
			_ = c.NoContent(apiErr.Status)
			return
		}
		_ = c.JSON(apiErr.Status, map[string]*Error{"error": apiErr})
	}
}
