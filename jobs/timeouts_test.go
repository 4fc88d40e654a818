package jobs

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// TestJobTimeouts: the timeout Deps reports for each kind is the one its worker gives
// River, the settings change them, and the derived rescue threshold is WindDown above the
// longest.
func TestJobTimeouts(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		deps                     Deps
		enrich, reweight, sync   time.Duration
		housekeeping, rescueAuto time.Duration
	}{
		{"defaults", Deps{}, 5 * time.Minute, 10 * time.Minute, 2 * time.Minute, time.Minute, 11 * time.Minute},
		{"settings", Deps{EnrichTimeout: 2 * time.Second, ReweightTimeout: 3 * time.Second, SyncTimeout: time.Second, JobTimeout: 500 * time.Millisecond},
			2 * time.Second, 3 * time.Second, 1500 * time.Millisecond, 500 * time.Millisecond, 3*time.Second + WindDown},
	} {
		d := tc.deps
		workers := map[string]time.Duration{
			EnrichToolArgs{}.Kind():   (&EnrichToolWorker{deps: d}).Timeout(nil),
			ReweightArgs{}.Kind():     (&ReweightWorker{deps: d}).Timeout(nil),
			SyncArgs{}.Kind():         (&SyncWorker{deps: d}).Timeout(nil),
			LexicalIndexArgs{}.Kind(): (&LexicalIndexWorker{deps: d}).Timeout(nil),
		}
		want := map[string]time.Duration{
			EnrichToolArgs{}.Kind(): tc.enrich, ReweightArgs{}.Kind(): tc.reweight, SyncArgs{}.Kind(): tc.sync,
			SearchLogMaintenanceArgs{}.Kind(): tc.housekeeping, MCPSessionCleanupArgs{}.Kind(): tc.housekeeping,
			LexicalIndexArgs{}.Kind(): tc.housekeeping,
		}
		for kind, w := range want {
			if got := d.Timeout(kind); got != w {
				t.Errorf("%s: Timeout(%s) = %v, want %v", tc.name, kind, got, w)
			}
			if got := d.AbandonedAfter(kind); got != w+WindDown {
				t.Errorf("%s: AbandonedAfter(%s) = %v, want %v", tc.name, kind, got, w+WindDown)
			}
			if got := DefaultAbandonedAfter(kind); tc.name == "defaults" && got != w+WindDown {
				t.Errorf("DefaultAbandonedAfter(%s) = %v, want %v", kind, got, w+WindDown)
			}
			if wt, ok := workers[kind]; ok && wt != w {
				t.Errorf("%s: the %s worker's timeout is %v, Deps says %v", tc.name, kind, wt, w)
			}
		}
		if got := d.rescueAfter(Options{}); got != tc.rescueAuto {
			t.Errorf("%s: derived rescue after %v, want %v", tc.name, got, tc.rescueAuto)
		}
		if got := d.rescueAfter(Options{RescueAfter: time.Hour}); got != time.Hour {
			t.Errorf("%s: explicit rescue after %v, want 1h", tc.name, got)
		}
	}
}

// TestRescueRetriesAbandonedJob: a job left running by a client that is gone (its row says
// running, attempted 10 minutes ago) is retried by the rescuer of a new client within
// seconds of RescueAfter, not River's default hour, and completes; a job attempted just now
// is left running.
func TestRescueRetriesAbandonedJob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	deps := Deps{Pool: pool, Logger: slog.New(slog.DiscardHandler), EnrichTimeout: time.Second,
		ReweightTimeout: time.Second, SyncTimeout: time.Second, JobTimeout: time.Second}
	rc, err := NewClient(deps, Options{Work: true, MaxWorkers: 2, RescueAfter: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	stale, err := rc.Insert(ctx, MCPSessionCleanupArgs{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	live, err := rc.Insert(ctx, APIKeyRateCleanupArgs{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// What a process killed mid-job leaves: the row running, attempted by a client that is gone.
	for id, ago := range map[int64]string{stale.Job.ID: "10 minutes", live.Job.ID: "0 seconds"} {
		if _, err := pool.Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now() - $2::interval,
			attempted_by = '{dead-client}' WHERE id = $1`, id, ago); err != nil {
			t.Fatal(err)
		}
	}
	events := testfactory.JobEvents(t, rc)
	if err := rc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.StopAndCancel(context.Background()) })

	ev := testfactory.WaitJob(t, events, time.Minute, "the abandoned job to be rescued and completed", func(ev *river.Event) bool {
		return ev.Job.ID == stale.Job.ID
	})
	job := ev.Job
	if ev.Kind != river.EventKindJobCompleted {
		t.Fatalf("rescued job ended %s: %v", job.State, job.Errors)
	}
	if job.Attempt != 2 || len(job.Errors) != 1 || job.Errors[0].Error != "Stuck job rescued by JobRescuer" {
		t.Fatalf("rescued job: attempt %d, errors %+v", job.Attempt, job.Errors)
	}
	if job, err = rc.JobGet(ctx, live.Job.ID); err != nil || job.State != rivertype.JobStateRunning || len(job.Errors) != 0 {
		t.Fatalf("the job attempted just now: %+v, %v; want it left running", job, err)
	}
}
