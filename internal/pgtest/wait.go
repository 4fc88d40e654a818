package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// WaitLockWait waits until a statement of pool's database whose text contains query waits
// for a lock, and fails the test if none does within a minute (a bound on a hang, not a
// timing assertion). A test that holds a row lock in an open transaction calls it before
// committing, so the statement it races is certainly blocked on that lock: the only place
// that state shows is the server's pg_stat_activity, hence the polling.
func WaitLockWait(t testing.TB, pool *pgxpool.Pool, query string) {
	t.Helper()
	ctx := context.Background()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		var waiting bool
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND strpos(query, $1) > 0)`, query).Scan(&waiting); err != nil {
			t.Fatalf("pgtest: lock waits: %v", err)
		}
		if waiting {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgtest: no statement containing %q waited for a lock within a minute", query)
		}
	}
}
