package derrors_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/internal/derrors"
)

type missing struct{ name string }

func (e *missing) Error() string        { return "no thing named " + e.name }
func (e *missing) Is(target error) bool { return target == derrors.NotFound }

type clash struct{}

func (clash) Error() string        { return "it clashes" }
func (clash) Is(target error) bool { return target == derrors.Conflict }
func (clash) Code() string         { return "thing_clash" }
func (clash) Details() any         { return []int{1, 2} }

type secret struct{}

func (secret) Error() string         { return "dial 10.0.0.7: refused" }
func (secret) Is(target error) bool  { return target == derrors.Unavailable }
func (secret) PublicMessage() string { return "the thing is down" }

func TestClassify(t *testing.T) {
	sentinel := &derrors.Sentinel{Category: derrors.Unauthorized, Message: "bad key", Public: "send a key", APICode: "key_bad"}
	for _, tc := range []struct {
		name string
		err  error
		want derrors.Answer
	}{
		{"typed, the category's code", &missing{"x"}, derrors.Answer{Status: http.StatusNotFound, Code: "not_found", Message: "no thing named x"}},
		{"its own message, not the wrapper's", fmt.Errorf("load: %w", &missing{"y"}), derrors.Answer{Status: 404, Code: "not_found", Message: "no thing named y"}},
		{"own code and details", clash{}, derrors.Answer{Status: http.StatusConflict, Code: "thing_clash", Message: "it clashes", Details: []int{1, 2}}},
		{"public message", fmt.Errorf("x: %w", secret{}), derrors.Answer{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "the thing is down"}},
		{"sentinel", sentinel, derrors.Answer{Status: http.StatusUnauthorized, Code: "key_bad", Message: "send a key"}},
		{"joined", errors.Join(errors.New("plain"), &missing{"z"}), derrors.Answer{Status: 404, Code: "not_found", Message: "no thing named z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := derrors.Classify(tc.err)
			if !ok || got.Status != tc.want.Status || got.Code != tc.want.Code || got.Message != tc.want.Message ||
				fmt.Sprint(got.Details) != fmt.Sprint(tc.want.Details) {
				t.Fatalf("Classify(%v) = %+v %v, want %+v", tc.err, got, ok, tc.want)
			}
		})
	}
	if !errors.Is(sentinel, derrors.Unauthorized) || !errors.Is(fmt.Errorf("w: %w", sentinel), sentinel) {
		t.Error("a sentinel is its category and itself")
	}
}

// A missing row is not "not found" by itself: the read that expects the caller's thing
// converts it; any other missing row is an internal error.
func TestUncategorizedIsInternal(t *testing.T) {
	for _, err := range []error{pgx.ErrNoRows, fmt.Errorf("load: %w", pgx.ErrNoRows), errors.New("boom")} {
		if a, ok := derrors.Classify(err); ok {
			t.Errorf("Classify(%v) = %+v, want no category", err, a)
		}
	}
}
