package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/profiles"
	"github.com/toolgate/toolgate/internal/tdwa"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// countingEmbedder counts Embed calls.
type countingEmbedder struct {
	embed.Embedder
	calls atomic.Int64
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.calls.Add(1)
	return c.Embedder.Embed(ctx, texts)
}

// enrichedCatalog imports the demo tools of n companies and enriches them with deps's
// enrichment service. It returns the number of tools.
func enrichedCatalog(t *testing.T, pool *pgxpool.Pool, deps Deps, n int) int {
	t.Helper()
	ids := testfactory.DemoCatalog(context.Background(), t, pool, n, nil)
	testfactory.Enrich(context.Background(), t, deps.enrichService(), ids...)
	return len(ids)
}

// meanRank is the mean rank (1 = nearest) of each tool for each of its synthetic questions,
// ranked by cosine distance over the profile's current vector set.
func meanRank(t *testing.T, pool *pgxpool.Pool, e *embed.Local, profile string) float64 {
	t.Helper()
	ctx := context.Background()
	rows, err := pool.Query(ctx, `SELECT tool_id, text FROM tool_components WHERE kind = 'question' ORDER BY tool_id, ordinal`)
	if err != nil {
		t.Fatal(err)
	}
	type question struct {
		tool int64
		text string
	}
	var qs []question
	for rows.Next() {
		var q question
		if err := rows.Scan(&q.tool, &q.text); err != nil {
			t.Fatal(err)
		}
		qs = append(qs, q)
	}
	if rows.Err() != nil || len(qs) == 0 {
		t.Fatalf("questions: %d %v", len(qs), rows.Err())
	}
	sum := 0
	for _, q := range qs {
		var rank int
		err := pool.QueryRow(ctx, `
			WITH ranked AS (
				SELECT v.tool_id, rank() OVER (ORDER BY v.embedding <=> $1) AS r
				FROM tool_vectors v JOIN weight_profiles p ON p.current_set = v.set_id
				WHERE p.name = $2)
			SELECT r FROM ranked WHERE tool_id = $3`, pgvecOf(e.Vector(q.text)), profile, q.tool).Scan(&rank)
		if err != nil {
			t.Fatal(err)
		}
		sum += rank
	}
	return float64(sum) / float64(len(qs))
}

// runReweightJob enqueues the profile's re-weight and works it with a River client whose
// embedder counts calls.
func runReweightJob(t *testing.T, pool *pgxpool.Pool, deps Deps, profile string) profiles.ReweightStart {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rc, err := NewClient(deps, Options{Work: true, MaxWorkers: 2})
	if err != nil {
		t.Fatal(err)
	}
	events, stop := rc.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled)
	defer stop()
	start, err := profiles.StartReweight(ctx, pool, NewQueue(rc), profile)
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Stop(context.Background()) }()
	for {
		select {
		case ev := <-events:
			if ev.Job.ID != start.JobID {
				continue
			}
			if ev.Kind != river.EventKindJobCompleted {
				t.Fatalf("reweight job %s: %v", ev.Kind, ev.Job.Errors)
			}
			return start
		case <-ctx.Done():
			t.Fatal("reweight job did not finish")
		}
	}
}

func TestReweightChangesRankingWithoutEmbedding(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	local := embed.NewLocal(384)
	counter := &countingEmbedder{Embedder: local}
	deps := localDeps(pool)
	deps.Embedder = counter
	n := enrichedCatalog(t, pool, deps, 2)

	lowQ := map[string]float64{"name": 1, "description": 1, "parameters": 1, "question": 0}
	highQ := map[string]float64{"name": 0.01, "description": 0.01, "parameters": 0.01, "question": 1}

	testfactory.Weights(context.Background(), t, pool, "default", lowQ)
	before := testfactory.CurrentSet(context.Background(), t, pool, "default")
	calls := counter.calls.Load()
	first := runReweightJob(t, pool, deps, "default")
	if cur := testfactory.CurrentSet(context.Background(), t, pool, "default"); cur != first.SetID || cur == before {
		t.Fatalf("current set %d, want the new set %d (old %d)", cur, first.SetID, before)
	}
	rankLow := meanRank(t, pool, local, "default")

	testfactory.Weights(context.Background(), t, pool, "default", highQ)
	second := runReweightJob(t, pool, deps, "default")
	rankHigh := meanRank(t, pool, local, "default")
	if got := counter.calls.Load() - calls; got != 0 {
		t.Errorf("%d embedding calls during re-weighting, want 0", got)
	}
	if !(rankHigh < rankLow) {
		t.Errorf("raising the question weight: mean rank of a tool for its own question %.2f -> %.2f, want lower", rankLow, rankHigh)
	}
	t.Logf("mean rank of a tool for its questions: %.3f (question weight 0) -> %.3f (question-heavy)", rankLow, rankHigh)
	if rankHigh > 1.5 {
		t.Errorf("question-weighted mean rank %.2f, want near 1", rankHigh)
	}

	if got := countRows(t, pool, `SELECT count(*) FROM tool_vectors WHERE set_id = $1`, second.SetID); got != n {
		t.Errorf("new set holds %d vectors, want %d", got, n)
	}
	// retired sets are deleted with their vectors
	if got := countRows(t, pool, `SELECT count(*) FROM vector_sets WHERE id IN ($1, $2)`, before, first.SetID); got != 0 {
		t.Errorf("%d old sets left, want 0", got)
	}
	// the stored vector is exactly tdwa.Combine of the components
	var toolID int64
	var stored []float32
	if err := pool.QueryRow(ctx, `SELECT tool_id, embedding::real[] FROM tool_vectors WHERE set_id = $1 ORDER BY tool_id LIMIT 1`, second.SetID).Scan(&toolID, &stored); err != nil {
		t.Fatal(err)
	}
	rows, err := db.New(pool).ListComponentVectors(ctx, []int64{toolID})
	if err != nil {
		t.Fatal(err)
	}
	want, err := combine(rows, tdwa.Profile{Strategy: tdwa.StrategyTDWA, Weights: highQ})
	if err != nil {
		t.Fatalf("combine: %v %v", want, err)
	}
	for i, x := range want {
		if math.Abs(float64(x-stored[i])) > 1e-6 {
			t.Fatalf("stored vector differs from tdwa.Combine at %d: %v vs %v", i, stored[i], x)
		}
	}

	job, err := insertClient(t, pool).JobGet(ctx, second.JobID)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Progress(ctx, pool, job)
	if err != nil || p == nil || p.State != "ready" || p.Done != n || p.Total != n || p.SetID != second.SetID {
		t.Fatalf("progress %+v %v", p, err)
	}
}

func TestStartReweightIsUniquePerProfile(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	rc := insertClient(t, pool)
	a, err := profiles.StartReweight(ctx, pool, NewQueue(rc), "var-1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := profiles.StartReweight(ctx, pool, NewQueue(rc), "var-1")
	if err != nil {
		t.Fatal(err)
	}
	if !b.Duplicate || b.JobID != a.JobID || b.SetID != a.SetID || a.Duplicate {
		t.Fatalf("second enqueue %+v, first %+v", b, a)
	}
	if got := countRows(t, pool, `SELECT count(*) FROM vector_sets WHERE state = 'building'`); got != 1 {
		t.Errorf("%d building sets, want 1", got)
	}
	c, err := profiles.StartReweight(ctx, pool, NewQueue(rc), "var-2")
	if err != nil || c.JobID == a.JobID || c.Duplicate {
		t.Fatalf("another profile: %+v %v", c, err)
	}
	var nf *profiles.NotFoundError
	if _, err := profiles.StartReweight(ctx, pool, NewQueue(rc), "nope"); !errors.As(err, &nf) {
		t.Errorf("unknown profile: %v", err)
	}
	job, err := rc.JobGet(ctx, a.JobID)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Progress(ctx, pool, job)
	if err != nil || p == nil || p.State != "building" || p.SetID != a.SetID {
		t.Fatalf("progress of a queued re-weight: %+v %v", p, err)
	}
}

func TestReweightWorkerFailsSetOnlyWhenFinal(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	w := &ReweightWorker{deps: localDeps(pool)}
	state := func(id int64) db.VectorSetState {
		s, err := db.New(pool).GetVectorSet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return s.State
	}
	job := func(setID int64, attempt int) *river.Job[ReweightArgs] {
		return &river.Job[ReweightArgs]{JobRow: &rivertype.JobRow{Attempt: attempt, MaxAttempts: 5}, Args: ReweightArgs{Profile: "var-1", SetID: setID}}
	}

	// a remotely cancelled job: the set fails, the job is cancelled (not retried)
	set := testfactory.BeginReweight(context.Background(), t, pool, "var-1")
	cctx, cancel := context.WithCancelCause(ctx)
	cancel(river.ErrJobCancelledRemotely)
	var jc *river.JobCancelError
	if err := w.Work(cctx, job(set.ID, 1)); !errors.As(err, &jc) {
		t.Fatalf("cancelled: %v, want a JobCancelError", err)
	}
	if s := state(set.ID); s != "failed" {
		t.Fatalf("cancelled job's set is %s, want failed", s)
	}

	// an error before the last attempt keeps the set building for the retry; the last fails it
	set = testfactory.BeginReweight(context.Background(), t, pool, "var-1")
	// the set is built with the weights it was made with: break those
	if _, err := pool.Exec(ctx, `UPDATE vector_sets SET weights = '{"name": -1}' WHERE id = $1`, set.ID); err != nil {
		t.Fatal(err)
	}
	var ip *tdwa.InvalidProfileError
	if err := w.Work(ctx, job(set.ID, 2)); !errors.As(err, &ip) {
		t.Fatalf("attempt 2: %v", err)
	}
	if s := state(set.ID); s != "building" {
		t.Fatalf("after a retryable failure the set is %s, want building", s)
	}
	if err := w.Work(ctx, job(set.ID, 5)); !errors.As(err, &ip) {
		t.Fatalf("attempt 5: %v", err)
	}
	if s := state(set.ID); s != "failed" {
		t.Fatalf("after the last attempt the set is %s, want failed", s)
	}
}

// TestReweightSurvivesStopAndCancel is the SIGTERM fault (docs/faults.md): a River client
// running a re-weight is stopped with StopAndCancel, as `toolgate serve` does when the
// shutdown timeout passes, while the job waits to switch the profile to its new set (a
// test transaction holds the profile's row). The old set stays current and whole; a new
// client then finishes the same job and set, and the old set is retired (deleted).
func TestReweightSurvivesStopAndCancel(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	n := enrichedCatalog(t, pool, localDeps(pool), 2)
	old := testfactory.CurrentSet(context.Background(), t, pool, "default")
	testfactory.Weights(context.Background(), t, pool, "default", map[string]float64{"name": 1})

	first, err := NewClient(localDeps(pool), Options{Work: true, MaxWorkers: 2})
	if err != nil {
		t.Fatal(err)
	}
	// queued before the lock (enqueueing locks the profile too), worked after it
	start, err := profiles.StartReweight(ctx, pool, NewQueue(first), "default")
	if err != nil {
		t.Fatal(err)
	}
	lock, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lock.Rollback(ctx) }()
	if _, err := lock.Exec(ctx, `SELECT 1 FROM weight_profiles WHERE name = 'default' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	if err := first.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// wait until every vector of the new set is written and the switch waits for the lock
	waitFor(t, "the re-weight to wait for the switch", func() bool {
		return countRows(t, pool, `SELECT count(*) FROM tool_vectors WHERE set_id = $1`, start.SetID) == n &&
			countRows(t, pool, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`) > 0
	})
	stopCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := first.StopAndCancel(stopCtx); err != nil {
		t.Fatal(err)
	}
	if err := lock.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	// the old set is still the one searched, whole; the new one is still building
	if cur := testfactory.CurrentSet(context.Background(), t, pool, "default"); cur != old {
		t.Fatalf("current set %d after the stop, want the old %d", cur, old)
	}
	if got := countRows(t, pool, `SELECT count(*) FROM tool_vectors WHERE set_id = $1`, old); got != n {
		t.Fatalf("old set holds %d vectors after the stop, want %d", got, n)
	}
	if s, err := db.New(pool).GetVectorSet(ctx, start.SetID); err != nil || s.State != "building" {
		t.Fatalf("interrupted set: %+v %v, want building", s, err)
	}

	second, err := NewClient(localDeps(pool), Options{Work: true, MaxWorkers: 2})
	if err != nil {
		t.Fatal(err)
	}
	events := testfactory.JobEvents(t, second)
	if err := second.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = second.StopAndCancel(context.Background()) }()
	ev := testfactory.WaitJob(t, events, time.Minute, "the re-run to finish the job", func(ev *river.Event) bool {
		// a failed attempt is retried: wait for the job to end
		return ev.Job.ID == start.JobID && (ev.Kind != river.EventKindJobFailed || ev.Job.State == rivertype.JobStateDiscarded)
	})
	if ev.Kind != river.EventKindJobCompleted {
		t.Fatalf("job %d ended %s: %v", ev.Job.ID, ev.Job.State, ev.Job.Errors)
	}
	if cur := testfactory.CurrentSet(context.Background(), t, pool, "default"); cur != start.SetID {
		t.Fatalf("current set %d after the re-run, want %d", cur, start.SetID)
	}
	if got := countRows(t, pool, `SELECT count(*) FROM tool_vectors WHERE set_id = $1`, start.SetID); got != n {
		t.Fatalf("new set holds %d vectors, want %d", got, n)
	}
	// the old set is retired: deleted with its vectors
	if got := countRows(t, pool, `SELECT count(*) FROM tool_vectors WHERE set_id = $1`, old) +
		countRows(t, pool, `SELECT count(*) FROM vector_sets WHERE id = $1`, old); got != 0 {
		t.Errorf("old set %d not retired: %d rows left", old, got)
	}
}

// combine is tdwa.Combine of one tool's component rows.
func combine(rows []db.ListComponentVectorsRow, prof tdwa.Profile) ([]float32, error) {
	comps := make([]tdwa.Component, len(rows))
	for i, r := range rows {
		comps[i] = tdwa.Component{Kind: r.Kind, Ordinal: int(r.Ordinal), Vector: r.Embedding.Slice()}
	}
	return tdwa.Combine(comps, prof)
}

// waitFor polls cond every 50ms for up to 30s (a generous bound, not a timing assertion).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestWeightChangeWaitsForReweight: after a PUT of new weights, tools enriched later are
// still combined into the profile's current set with the weights that set was built with
// (the set stays one coherent weighting); the next re-weight builds with the new ones.
func TestWeightChangeWaitsForReweight(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	deps := localDeps(pool)
	enrichedCatalog(t, pool, deps, 1)
	oldW := map[string]float64{"name": 1, "description": 0, "parameters": 0, "question": 0}
	newW := map[string]float64{"name": 0, "description": 0, "parameters": 0, "question": 1}
	testfactory.Weights(context.Background(), t, pool, "default", oldW)
	runReweightJob(t, pool, deps, "default") // a current set built with oldW
	set := testfactory.CurrentSet(context.Background(), t, pool, "default")
	testfactory.Weights(context.Background(), t, pool, "default", newW)

	// a tool enriched after the PUT
	_, res := testfactory.Catalog(ctx, t, pool, "later", dataset.Tools(dataset.DemoCompanies[5:6])[:1], nil)
	id := res.Changed[0]
	testfactory.Enrich(ctx, t, deps.enrichService(), id)
	stored := func(setID int64) []float32 {
		t.Helper()
		var v pgvector.Vector
		if err := pool.QueryRow(ctx, `SELECT embedding FROM tool_vectors WHERE set_id = $1 AND tool_id = $2`, setID, id).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v.Slice()
	}
	combined := func(w map[string]float64) []float32 {
		t.Helper()
		raw, _ := json.Marshal(w)
		prof, err := tdwa.ParseProfile(tdwa.StrategyTDWA, raw)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := db.New(pool).ListComponentVectors(ctx, []int64{id})
		if err != nil {
			t.Fatal(err)
		}
		v, err := combine(rows, prof)
		if err != nil {
			t.Fatalf("combine: %v %v", v, err)
		}
		return v
	}
	near := func(a, b []float32) bool {
		var d float64
		for i := range a {
			d += float64(a[i]-b[i]) * float64(a[i]-b[i])
		}
		return d < 1e-8
	}
	got, withOld, withNew := stored(set), combined(oldW), combined(newW)
	if !near(got, withOld) || near(got, withNew) {
		t.Fatalf("the tool enriched after the PUT was combined with the new weights into the old set")
	}
	runReweightJob(t, pool, deps, "default")
	if next := testfactory.CurrentSet(context.Background(), t, pool, "default"); next == set || !near(stored(next), withNew) {
		t.Errorf("the re-weight after the PUT did not build with the new weights (set %d -> %d)", set, next)
	}
}

// TestProfileMadeOverAnEmbeddedCatalogWaitsForItsReweight: a profile created after the
// catalog was enriched gets no set from later enrichments (it would hold only the tools
// enriched since), so it cannot be activated until a re-weight built it whole.
func TestProfileMadeOverAnEmbeddedCatalogWaitsForItsReweight(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	deps := localDeps(pool)
	n := enrichedCatalog(t, pool, deps, 2)
	testfactory.Weights(context.Background(), t, pool, "fresh", map[string]float64{"name": 1, "question": 1})

	_, res := testfactory.Catalog(ctx, t, pool, "later", dataset.Tools(dataset.DemoCompanies[7:8])[:1], nil)
	testfactory.Enrich(ctx, t, deps.enrichService(), res.Changed...)
	var nb *profiles.NotBuiltError
	if _, err := profiles.Activate(ctx, pool, "fresh"); !errors.As(err, &nb) {
		t.Fatalf("activating a profile no re-weight built: %v, want NotBuiltError", err)
	}
	runReweightJob(t, pool, deps, "fresh")
	if got := countRows(t, pool, `SELECT count(*) FROM tool_vectors WHERE set_id = $1`, testfactory.CurrentSet(context.Background(), t, pool, "fresh")); got != n+1 {
		t.Errorf("the re-weighted set holds %d vectors, want %d", got, n+1)
	}
	if _, err := profiles.Activate(ctx, pool, "fresh"); err != nil {
		t.Errorf("activate after the re-weight: %v", err)
	}
}
