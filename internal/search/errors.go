package search

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/internal/derrors"
)

// InvalidRequestError is a request field with a bad value.
type InvalidRequestError struct {
	Field  string
	Reason string
}

func (e *InvalidRequestError) Error() string        { return e.Field + ": " + e.Reason }
func (e *InvalidRequestError) Is(target error) bool { return target == derrors.Invalid }

// UnknownError names profiles or sources that do not exist (or that the caller may not see).
type UnknownError struct {
	Kind  string // "profile" or "source"
	Names []string
}

func (e *UnknownError) Error() string {
	return fmt.Sprintf("unknown %s: %s", e.Kind, strings.Join(e.Names, ", "))
}

func (e *UnknownError) Is(target error) bool { return target == derrors.Invalid }
func (e *UnknownError) Code() string         { return "unknown_" + e.Kind }

// NotFoundError is a search id with no retrieval log row.
type NotFoundError struct{ ID int64 }

func (e *NotFoundError) Error() string        { return fmt.Sprintf("search %d not found", e.ID) }
func (e *NotFoundError) Is(target error) bool { return target == derrors.NotFound }

// EmbedError is a failed or timed-out embedding of the query in a vector search (a hybrid
// search falls back to its lexical branch instead).
type EmbedError struct{ Err error }

func (e *EmbedError) Error() string { return "embed the query: " + e.Err.Error() }
func (e *EmbedError) Unwrap() error { return e.Err }

func (e *EmbedError) Is(target error) bool { return target == derrors.Unavailable }
func (e *EmbedError) Code() string         { return "embedder_unavailable" }

// PublicMessage is the API's message: the Reason, and what still works.
func (e *EmbedError) PublicMessage() string {
	return "vector search unavailable: " + e.Reason() + "; mode lexical or hybrid still works"
}

// Reason is what a caller may be told: whether the provider timed out or failed, without
// its address or answer.
func (e *EmbedError) Reason() string {
	if errors.Is(e.Err, context.DeadlineExceeded) {
		return "the embedding provider timed out"
	}
	return "the embedding provider failed"
}

// ErrNoEmbedder is a vector search on a server without an embedding provider.
var ErrNoEmbedder error = &derrors.Sentinel{Category: derrors.Invalid, APICode: "no_embedder",
	Message: "vector search needs an embedding provider; use mode lexical"}

// ErrStatementTimeout is a search whose statement ran past Settings.StatementTimeout: it was
// cancelled so that it would not hold its connection any longer.
var ErrStatementTimeout error = &derrors.Sentinel{Category: derrors.Unavailable, APICode: "search_timeout",
	Message: "the search ran past its time limit (TOOLGATE_SEARCH_STATEMENT_TIMEOUT); fewer variants or a smaller k may succeed"}
