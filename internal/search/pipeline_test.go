package search

import (
	"context"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
)

// TestPipeline: statements queued by Exec travel with the next Query in one batch, share its
// implicit transaction (a set_config(..., true) applies to the Query and does not outlive
// it on the pooled connection), and their errors are reported by that Query.
func TestPipeline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, err := postgres.Connect(ctx, pgtest.NewDB(t), postgres.WithMaxConns(1))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	p := newPipeline(pool)
	if _, err := p.Exec(ctx, "-- name: SetWorkMem :exec\nSELECT set_config('work_mem', '1234kB', true)"); err != nil {
		t.Fatal(err)
	}
	var inBatch string
	if err := p.QueryRow(ctx, `SELECT current_setting('work_mem')`).Scan(&inBatch); err != nil || inBatch != "1234kB" {
		t.Fatalf("work_mem in the batch: %q, %v; want 1234kB", inBatch, err)
	}
	var after string // same connection (one in the pool), next transaction
	if err := pool.QueryRow(ctx, `SELECT current_setting('work_mem')`).Scan(&after); err != nil || after == "1234kB" {
		t.Fatalf("work_mem after the batch: %q, %v; the local setting leaked", after, err)
	}

	p = newPipeline(pool)
	if _, err := p.Exec(ctx, "-- name: SetWorkMem :exec\nSELECT set_config('work_mem', 'lots', true)"); err != nil {
		t.Fatal(err)
	}
	rows, err := p.Query(ctx, `SELECT 1`)
	if err == nil {
		rows.Close()
		t.Fatal("a failing queued statement was not reported")
	}
	if !strings.Contains(err.Error(), "work_mem") {
		t.Errorf("error %v does not name the failing setting", err)
	}
	var one int // the pool is usable afterwards
	if err := pool.QueryRow(ctx, `SELECT 1`).Scan(&one); err != nil || one != 1 {
		t.Fatalf("pool after a failed batch: %v", err)
	}
}

// TestPipelineExecTakesOnlyExecQueries: Exec cannot know a queued statement's command tag,
// so it refuses any statement whose caller could read one (an :execrows or :execresult
// query, or raw SQL) instead of answering a zero tag.
func TestPipelineExecTakesOnlyExecQueries(t *testing.T) {
	p := newPipeline(nil) // nothing is sent: Exec only queues
	for _, sql := range []string{
		"-- name: DeleteThings :execrows\nDELETE FROM t",
		"-- name: UpdateThings :execresult\nUPDATE t SET a = 1",
		"-- name: GetThing :one\nSELECT 1",
		"SELECT set_config('jit', 'off', true)",
		"",
	} {
		if _, err := p.Exec(context.Background(), sql); err == nil || !strings.Contains(err.Error(), "only sqlc :exec queries") {
			t.Errorf("%q: %v, want a refusal", sql, err)
		}
	}
	if _, err := p.Exec(context.Background(), "-- name: SearchSetConfig :exec\nSELECT 1"); err != nil {
		t.Errorf("an :exec query: %v", err)
	}
	if p.pending.Len() != 1 {
		t.Errorf("%d statements queued, want the :exec one", p.pending.Len())
	}
}
