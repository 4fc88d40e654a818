// Package derrors sorts the errors a caller can cause into a few categories, and is the one
// mapping from them to what a caller is told: an HTTP status and a code (package api
// writes them as {"error": {"code", "message", "details"}}; docs/architecture.md#errors).
//
// A typed error joins a category with an Is method, as River's errors do, so that callers
// and tests use errors.Is and errors.As and never match strings:
//
//	func (e *NotFoundError) Is(target error) bool { return target == derrors.NotFound }
//
// It may also name its own code (Code() string: "wrong_source_kind" rather than the
// category's "conflict"), carry details (Details() any) and say what a caller may read
// when its Error() holds internal words (PublicMessage() string). An error value compared
// with errors.Is is a *Sentinel. An error of no category is internal: a 500 whose cause is
// only logged. pgx.ErrNoRows is never one: a read whose missing row is the caller's
// mistake converts it where it reads (catalog.ToolNotFoundError, profiles.NotFoundError).
package derrors

//lint:file-ignore ST1012 the categories are named for what they are (derrors.NotFound, as in pkgsite's derrors): ErrNotFound would only repeat the package's name in every errors.Is.

import (
	"errors"
	"net/http"
)

// The categories.
var (
	// NotFound: what the caller named does not exist (or is not the caller's to see).
	NotFound = errors.New("not found")
	// Invalid: the request itself is wrong; sent again unchanged it fails again.
	Invalid = errors.New("invalid")
	// Conflict: the request is valid but the state of what it names refuses it now.
	Conflict = errors.New("conflict")
	// Forbidden: the caller may not do this (scope, origin, command allowlist).
	Forbidden = errors.New("forbidden")
	// Unauthorized: no valid credentials.
	Unauthorized = errors.New("unauthorized")
	// RateLimited: too many requests; the same one later succeeds.
	RateLimited = errors.New("rate limited")
	// Unavailable: a dependency is down; the same request later may succeed.
	Unavailable = errors.New("unavailable")
)

// category is one category's answer.
type category struct {
	err    error
	status int
	code   string // the default code
}

// categories in the order they are tried, for an error of several (it wraps another).
var categories = []category{
	{Unauthorized, http.StatusUnauthorized, "unauthorized"},
	{Forbidden, http.StatusForbidden, "forbidden"},
	{RateLimited, http.StatusTooManyRequests, "rate_limited"},
	{Invalid, http.StatusBadRequest, "invalid_request"},
	{NotFound, http.StatusNotFound, "not_found"},
	{Conflict, http.StatusConflict, "conflict"},
	{Unavailable, http.StatusServiceUnavailable, "unavailable"},
}

// Answer is what a caller is told of an error.
type Answer struct {
	Status  int
	Code    string
	Message string
	Details any
}

// Classify returns the answer to err: the status of its category, and the code, message
// and details of the error in err's chain that belongs to it. ok is false when no error in
// the chain belongs to a category (an internal error).
func Classify(err error) (a Answer, ok bool) {
	for _, c := range categories {
		e := member(err, c.err)
		if e == nil {
			continue
		}
		a = Answer{Status: c.status, Code: c.code, Message: e.Error()}
		if x, ok := e.(interface{ Code() string }); ok && x.Code() != "" {
			a.Code = x.Code()
		}
		if x, ok := e.(interface{ PublicMessage() string }); ok && x.PublicMessage() != "" {
			a.Message = x.PublicMessage()
		}
		if x, ok := e.(interface{ Details() any }); ok {
			a.Details = x.Details()
		}
		return a, true
	}
	return Answer{}, false
}

// member returns the first error of err's tree (depth first, as errors.Is walks it) that
// belongs to category cat by its own Is method, or nil.
func member(err, cat error) error {
	for err != nil {
		if x, ok := err.(interface{ Is(error) bool }); ok && x.Is(cat) {
			return err
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if m := member(e, cat); m != nil {
					return m
				}
			}
			return nil
		default:
			return nil
		}
	}
	return nil
}

// Sentinel is an error value of a category, compared with errors.Is:
//
//	var ErrKeyNotFound = &derrors.Sentinel{Category: derrors.NotFound, Message: "no such API key"}
type Sentinel struct {
	Category error
	// Message is Error(); Public, when set, is what a caller is told instead.
	Message, Public string
	// APICode is the code a caller is told; empty means the category's.
	APICode string
}

func (s *Sentinel) Error() string { return s.Message }

// Is reports whether target is the sentinel's category (the sentinel itself compares
// equal by identity, as any error value does).
func (s *Sentinel) Is(target error) bool { return target == s.Category }

// Code is the code a caller is told; empty means the category's.
func (s *Sentinel) Code() string { return s.APICode }

// PublicMessage is what a caller is told; empty means Error().
func (s *Sentinel) PublicMessage() string { return s.Public }
