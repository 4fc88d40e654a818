package tune

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/db"
)

// WithDefaults is opts with its defaults filled and validated, as a tune takes them.
func WithDefaults(opts Options) (Options, error) { return opts.withDefaults(time.Now()) }

// SelectedPerKey is what a tune with opts would train and evaluate on: how many of its
// labelled searches each search key made (by key id), and how many trusted callers made
// (no key, an admin key).
func SelectedPerKey(ctx context.Context, pool *pgxpool.Pool, opts Options) (map[int64]int, int, error) {
	opts, err := opts.withDefaults(time.Now())
	if err != nil {
		return nil, 0, err
	}
	ls, err := loadLabels(ctx, db.New(pool), opts, time.Now())
	if err != nil {
		return nil, 0, err
	}
	perKey, trusted := map[int64]int{}, 0
	for _, s := range ls.searches {
		if s.keyID == 0 {
			trusted++
		} else {
			perKey[s.keyID]++
		}
	}
	return perKey, trusted, nil
}
