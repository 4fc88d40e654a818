package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/riverdb"
)

// ErrorScrubber masks credentials in the text of River job errors. Errors are scrubbed
// when they are made (mcpclient.Config.Scrub), but rows written before that, or by an
// older toolgate, still hold them as they were; River keeps finished jobs for days. So
// every error is scrubbed again where it is shown (the admin job endpoints) and where old
// rows are rewritten (ScrubJobErrors).
type ErrorScrubber struct {
	configs []mcpclient.Config
}

// NewErrorScrubber masks the credentials of every source that exists now.
func NewErrorScrubber(ctx context.Context, q db.DBTX) (*ErrorScrubber, error) {
	srcs, err := db.New(q).ListSources(ctx)
	if err != nil {
		return nil, err
	}
	s := &ErrorScrubber{}
	for _, src := range srcs {
		if cfg, err := mcpclient.ParseConfig(src.Config); err == nil {
			s.configs = append(s.configs, cfg)
		}
	}
	return s, nil
}

// urlPattern finds the URLs a text quotes (up to a quote, space or angle bracket).
var urlPattern = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>` + "`" + `]+`)

// Text is msg with the credentials of every source masked as mcpclient.Config.Scrub masks
// them, and the user info and credential parameters of any URL it quotes masked too (a
// source deleted since may be quoted: its credentials are no longer known, but its URL's
// are still visible in it).
func (s *ErrorScrubber) Text(msg string) string {
	for _, cfg := range s.configs {
		msg = cfg.Scrub(errors.New(msg)).Error()
	}
	return urlPattern.ReplaceAllStringFunc(msg, func(u string) string {
		// A URL without credentials is left as written, not re-encoded.
		if r := mcpclient.RedactURL(u); strings.Contains(r, mcpclient.Masked) {
			return r
		}
		return u
	})
}

// ScrubJobErrors rewrites the errors of every River job whose errors hold a credential
// that ErrorScrubber masks, and returns how many jobs it changed. A job whose errors
// change meanwhile (River appended one) is left for the next pass. `serve` runs it once
// at start in processes that work jobs; it is idempotent.
func ScrubJobErrors(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	s, err := NewErrorScrubber(ctx, pool)
	if err != nil {
		return 0, err
	}
	all, err := riverdb.ListJobErrors(ctx, pool)
	if err != nil {
		return 0, err
	}
	changed := 0
	for _, j := range all {
		var errs []map[string]any
		if err := json.Unmarshal([]byte(j.Errors), &errs); err != nil {
			return changed, fmt.Errorf("errors of job %d: %w", j.ID, err)
		}
		dirty := false
		for _, e := range errs {
			if msg, ok := e["error"].(string); ok {
				if clean := s.Text(msg); clean != msg {
					e["error"], dirty = clean, true
				}
			}
		}
		if !dirty {
			continue
		}
		out, err := json.Marshal(errs)
		if err != nil {
			return changed, err
		}
		replaced, err := riverdb.ReplaceJobErrors(ctx, pool, j.ID, j.Errors, string(out))
		if err != nil {
			return changed, err
		}
		if replaced {
			changed++
		}
	}
	return changed, nil
}
