package jobs

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/pgtest"
)

// TestAPIKeyRateCleanupDeletesOnlyExpiredWindows: of keys and of OAuth subjects.
func TestAPIKeyRateCleanupDeletesOnlyExpiredWindows(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	q := db.New(pool)
	now := time.Now().Truncate(time.Minute)
	for _, w := range []time.Time{now.Add(-time.Hour), now.Add(-6 * time.Minute), now.Add(-time.Minute), now} {
		if _, err := q.CountAPIKeyUse(ctx, db.CountAPIKeyUseParams{KeyID: 1, WindowStart: w, Now: now}); err != nil {
			t.Fatal(err)
		}
		if _, err := q.CountOAuthSubjectUse(ctx, db.CountOAuthSubjectUseParams{Subject: "oauth:https://as.example.com#alice", WindowStart: w}); err != nil {
			t.Fatal(err)
		}
	}
	w := &APIKeyRateCleanupWorker{deps: Deps{Pool: pool, Logger: slog.New(slog.DiscardHandler)}}
	if err := w.Work(ctx, &river.Job[APIKeyRateCleanupArgs]{}); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"api_key_rate", "oauth_subject_rate"} {
		var left []time.Time
		rows, err := pool.Query(ctx, `SELECT window_start FROM `+table+` ORDER BY window_start`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var ts time.Time
			if err := rows.Scan(&ts); err != nil {
				t.Fatal(err)
			}
			left = append(left, ts)
		}
		if rows.Err() != nil {
			t.Fatal(rows.Err())
		}
		if len(left) != 2 || !left[0].Equal(now.Add(-time.Minute)) || !left[1].Equal(now) {
			t.Errorf("%s: windows left = %v, want the last two (%v, %v)", table, left, now.Add(-time.Minute), now)
		}
	}
}
