package api

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/gateway"
	"github.com/toolgate/toolgate/internal/httpguard"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/profiles"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/internal/tdwa"
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

// toAPIError maps any error to the one written to the client. Errors of known types keep
// their meaning; anything else is an internal error whose details are only logged.
func toAPIError(err error) *Error {
	var (
		apiErr   *Error
		httpErr  *echo.HTTPError
		mcpErr   *gateway.HTTPError
		parseErr *catalog.ParseError
		toolErr  *catalog.InvalidToolError
		kindErr  *sources.SourceKindError
		cfgErr   *mcpclient.ConfigError
		cmdErr   *mcpclient.CommandNotAllowedError
		mcpKind  *sources.NotMCPSourceError
		noReview *sources.NothingToReviewError
		scopeErr *auth.ScopeError
		rateErr  *auth.RateLimitError
		origErr  *httpguard.CrossOriginError
		hostErr  *httpguard.HostError
		specErr  *auth.InvalidSpecError
		nameErr  *auth.NameTakenError
		profErr  *tdwa.InvalidProfileError
		// search
		searchInvalid  *search.InvalidRequestError
		searchUnknown  *search.UnknownError
		searchNotFound *search.NotFoundError
		searchEmbed    *search.EmbedError
		pnfErr         *profiles.NotFoundError
		actErr         *profiles.ActiveError
		nbErr          *profiles.NotBuiltError
	)
	switch {
	case errors.As(err, &apiErr):
		return apiErr
	case errors.As(err, &parseErr):
		return &Error{Status: http.StatusBadRequest, Code: "invalid_catalog", Message: parseErr.Error(), Details: parseErr.Problems}
	case errors.As(err, &kindErr):
		return &Error{Status: http.StatusConflict, Code: "wrong_source_kind", Message: kindErr.Error()}
	case errors.As(err, &cfgErr):
		return &Error{Status: http.StatusBadRequest, Code: "invalid_source_config", Message: cfgErr.Error()}
	case errors.As(err, &cmdErr):
		return &Error{Status: http.StatusForbidden, Code: "command_not_allowed", Message: cmdErr.Error()}
	case errors.As(err, &mcpKind):
		return &Error{Status: http.StatusConflict, Code: "wrong_source_kind", Message: mcpKind.Error()}
	case errors.As(err, &noReview):
		return &Error{Status: http.StatusConflict, Code: "nothing_to_review", Message: noReview.Error()}
	case errors.As(err, &toolErr):
		return &Error{Status: http.StatusBadRequest, Code: "invalid_tool", Message: toolErr.Error()}
	case errors.Is(err, auth.ErrInvalidKey):
		return &Error{Status: http.StatusUnauthorized, Code: "unauthorized", Message: "missing or invalid API key (send an Authorization: Bearer header)"}
	case errors.Is(err, auth.ErrRevokedKey):
		return &Error{Status: http.StatusUnauthorized, Code: "key_revoked", Message: err.Error()}
	case errors.As(err, &scopeErr):
		return &Error{Status: http.StatusForbidden, Code: "forbidden", Message: scopeErr.Error()}
	case errors.As(err, &origErr):
		return &Error{Status: http.StatusForbidden, Code: "cross_origin", Message: origErr.Error()}
	case errors.As(err, &hostErr):
		return &Error{Status: http.StatusForbidden, Code: "forbidden_host", Message: hostErr.Error()}
	case errors.As(err, &rateErr):
		return &Error{Status: http.StatusTooManyRequests, Code: "rate_limited", Message: rateErr.Error(),
			Details: map[string]int{"limit_per_min": rateErr.Limit, "retry_after_s": auth.RetryAfterSeconds(rateErr.RetryAfter)}}
	case errors.As(err, &specErr):
		return &Error{Status: http.StatusBadRequest, Code: "invalid_request", Message: specErr.Error()}
	case errors.As(err, &nameErr):
		return &Error{Status: http.StatusConflict, Code: "conflict", Message: nameErr.Error()}
	case errors.As(err, &pnfErr):
		return notFound("%s", pnfErr.Error())
	case errors.As(err, &actErr):
		return &Error{Status: http.StatusConflict, Code: "profile_active", Message: actErr.Error()}
	case errors.As(err, &nbErr):
		return &Error{Status: http.StatusConflict, Code: "profile_not_built", Message: nbErr.Error()}
	case errors.Is(err, auth.ErrKeyNotFound):
		return notFound("API key not found")
	case errors.As(err, &profErr):
		return &Error{Status: http.StatusBadRequest, Code: "invalid_profile", Message: profErr.Error()}
	case errors.As(err, &searchInvalid):
		return &Error{Status: http.StatusBadRequest, Code: "invalid_request", Message: searchInvalid.Error()}
	case errors.As(err, &searchUnknown):
		return &Error{Status: http.StatusBadRequest, Code: "unknown_" + searchUnknown.Kind, Message: searchUnknown.Error()}
	case errors.As(err, &searchNotFound):
		return notFound("%s", searchNotFound.Error())
	case errors.As(err, &searchEmbed):
		return &Error{Status: http.StatusServiceUnavailable, Code: "embedder_unavailable",
			Message: "vector search unavailable: " + searchEmbed.Reason() + "; mode lexical or hybrid still works"}
	case errors.Is(err, search.ErrNoEmbedder):
		return &Error{Status: http.StatusBadRequest, Code: "no_embedder", Message: err.Error()}
	case errors.Is(err, pgx.ErrNoRows):
		return notFound("not found")
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
	}
	return &Error{Status: http.StatusInternalServerError, Code: "internal", Message: "internal error"}
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
		return "too_large"
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
