package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/experiments"
	"github.com/toolgate/toolgate/internal/httpguard"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/profiles"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/internal/tdwa"
)

// TestErrorAnswers: every typed error a caller can cause gets its status and code (the
// table the API documents), wrapped or not; anything else, a stray missing row included,
// is a 500 that says nothing of its cause.
func TestErrorAnswers(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
		code   string
	}{
		{&catalog.ParseError{Problems: []catalog.Problem{{Line: 1, Reason: "x"}}}, 400, "invalid_catalog"},
		{&catalog.InvalidToolError{Reason: "x"}, 400, "invalid_tool"},
		{&catalog.ToolNotFoundError{Name: "a__b"}, 404, "not_found"},
		{&sources.SourceKindError{Source: "s", Kind: "mcp_http"}, 409, "wrong_source_kind"},
		{&sources.NotMCPSourceError{Source: "s", Kind: "catalog"}, 409, "wrong_source_kind"},
		{&sources.NothingToReviewError{Tool: "t"}, 409, "nothing_to_review"},
		{&mcpclient.ConfigError{Reason: "x"}, 400, "invalid_source_config"},
		{&mcpclient.CommandNotAllowedError{Command: "sh"}, 403, "command_not_allowed"},
		{auth.ErrInvalidKey, 401, "unauthorized"},
		{auth.ErrRevokedKey, 401, "key_revoked"},
		{&auth.ScopeError{Have: auth.ScopeSearch, Need: auth.ScopeAdmin}, 403, "forbidden"},
		{&httpguard.CrossOriginError{Origin: "https://evil"}, 403, "cross_origin"},
		{&httpguard.HostError{Host: "evil"}, 403, "forbidden_host"},
		{&auth.RateLimitError{Limit: 5, RetryAfter: time.Second}, 429, "rate_limited"},
		{&auth.InvalidSpecError{Field: "name", Reason: "x"}, 400, "invalid_request"},
		{&auth.NameTakenError{Name: "a"}, 409, "conflict"},
		{&profiles.NotFoundError{Name: "p"}, 404, "not_found"},
		{&profiles.ActiveError{Name: "p"}, 409, "profile_active"},
		{&profiles.NotBuiltError{Name: "p"}, 409, "profile_not_built"},
		{&profiles.InExperimentError{Name: "p", Experiment: "e"}, 409, "profile_in_experiment"},
		{&experiments.InvalidError{Field: "share", Reason: "x"}, 400, "invalid_experiment"},
		{&experiments.NotFoundError{Name: "e"}, 404, "not_found"},
		{&experiments.RunningError{Name: "e"}, 409, "experiment_running"},
		{&experiments.ExistsError{Name: "e"}, 409, "experiment_exists"},
		{auth.ErrKeyNotFound, 404, "not_found"},
		{&tdwa.InvalidProfileError{Reason: "x"}, 400, "invalid_profile"},
		{&search.InvalidRequestError{Field: "k", Reason: "x"}, 400, "invalid_request"},
		{&search.UnknownError{Kind: "profile", Names: []string{"p"}}, 400, "unknown_profile"},
		{&search.NotFoundError{ID: 1}, 404, "not_found"},
		{&search.EmbedError{Err: context.DeadlineExceeded}, 503, "embedder_unavailable"},
		{search.ErrNoEmbedder, 400, "no_embedder"},
		{badRequest("x"), 400, "invalid_request"},
		{pgx.ErrNoRows, 500, "internal"},
		// a connection lost mid-query (a killed backend): an outage (TestBackendKilledMidSearch)
		{fmt.Errorf("search: error preprocessing batch (prepare): %w", io.ErrUnexpectedEOF), 503, "unavailable"},
		{fmt.Errorf("search: %w", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}), 503, "unavailable"},
		{errors.New("boom"), 500, "internal"},
	} {
		for _, err := range []error{tc.err, fmt.Errorf("context: %w", tc.err)} {
			got := toAPIError(err)
			if got.Status != tc.status || got.Code != tc.code {
				t.Errorf("%v: %d %s, want %d %s", err, got.Status, got.Code, tc.status, tc.code)
			}
		}
	}
	// the messages a caller reads where the error's own text is not for them
	for err, want := range map[error]string{
		auth.ErrInvalidKey:  "missing or invalid API key (send an Authorization: Bearer header)",
		auth.ErrKeyNotFound: "API key not found",
		&search.EmbedError{Err: context.DeadlineExceeded}: "vector search unavailable: the embedding provider timed out; mode lexical or hybrid still works",
		pgx.ErrNoRows: "internal error",
	} {
		if got := toAPIError(err).Message; got != want {
			t.Errorf("%v: message %q, want %q", err, got, want)
		}
	}
	if d := toAPIError(&auth.RateLimitError{Limit: 5, RetryAfter: 1500 * time.Millisecond}).Details; fmt.Sprint(d) != "map[limit_per_min:5 retry_after_s:2]" {
		t.Errorf("rate limit details %v", d)
	}
	problems := []catalog.Problem{{Line: 3, Reason: "x"}}
	if got := toAPIError(&catalog.ParseError{Problems: problems}); got.Status != http.StatusBadRequest || fmt.Sprint(got.Details) != fmt.Sprint(problems) {
		t.Errorf("parse error details %v", got.Details)
	}
}
