package bench

import (
	"context"
	"fmt"
	"log/slog"
)

// RunLogged runs op as Run does and logs the result under what (the benchmark): it fails
// when every operation failed, and warns with the first error when some did.
func RunLogged(ctx context.Context, log *slog.Logger, what, name string, opts Options, op Op) (Result, error) {
	r, err := Run(ctx, name, opts, op)
	if err != nil {
		return r, err
	}
	log.Info(what, "result", r.String())
	if r.FirstError != nil && r.Errors == r.Runs {
		return r, fmt.Errorf("%s: every operation failed, the first with: %w", name, r.FirstError)
	}
	if r.FirstError != nil {
		log.Warn(what+": errors", "first", r.FirstError.Error())
	}
	return r, nil
}
