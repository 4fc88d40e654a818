package tune_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/eval"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/profiles"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
	"github.com/toolgate/toolgate/internal/tune"
	"github.com/toolgate/toolgate/jobs"
)

// countingEmbedder counts the texts it embeds.
type countingEmbedder struct {
	embed.Embedder
	texts atomic.Int64
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.texts.Add(int64(len(texts)))
	return c.Embedder.Embed(ctx, texts)
}

type setup struct {
	ctx   context.Context
	pool  *pgxpool.Pool
	queue jobs.Queue
	svc   *search.Service
}

// newSetup is a fresh database with the tools of source src imported and enriched by the
// built-in providers (questions synthetic questions per tool), and the search service of
// POST /search.
func newSetup(t *testing.T, src string, tools []catalog.Tool, questions int) setup {
	t.Helper()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, res := testfactory.Catalog(ctx, t, pool, src, tools, nil)
	testfactory.Enrich(ctx, t, testfactory.LocalEnricher(pool, questions), res.Changed...)
	if _, err := pool.Exec(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	return setup{ctx: ctx, pool: pool, queue: jobs.NewQueue(rc),
		svc: search.New(pool, embed.NewLocal(384), search.DefaultSettings(), log)}
}

// staleNames is testfactory.MisleadingCatalog read the other way: the descriptions are
// right and the names stale, so each request's used tool is the one whose description does
// that job. The lexical branch, which weighs names three times a description, ranks the
// tool named for the job first; the vector branch, which weighs questions and description
// above the name, leans to the used one. What agents see is their fusion.
func staleNames() ([]catalog.Tool, []testfactory.Use) {
	tools, uses := testfactory.MisleadingCatalog()
	// tool k describes the job of tool k+5 (each job has three uses, in tool order)
	for i := range uses {
		uses[i].Tools = []string{tools[(i/3-5+len(tools))%len(tools)].Name}
	}
	return tools, uses
}

// TestTuneFindsBetterWeightsWhereTheDefaultMisleads: on a catalog whose names mislead,
// labels from real searches and feedback let the tune find weights (TDWA and fusion) that
// rank the used tools higher in the fused ranking than the default profile on the held-out
// searches, with an interval above zero; it embeds each labelled query once and no tool,
// creates the profile inactive with its evidence and its fusion weights, and queues its
// re-weight.
func TestTuneFindsBetterWeightsWhereTheDefaultMisleads(t *testing.T) {
	t.Parallel()
	tools, queries := staleNames()
	s := newSetup(t, "ws", tools, 3)
	if n := testfactory.Labels(s.ctx, t, s.svc, "ws", queries); n < 100 {
		t.Fatalf("only %d of %d searches found their tool: the fixture does not exercise the tune", n, len(queries))
	}
	started, err := tune.Start(s.ctx, s.pool, s.queue, tune.Options{Profile: "learned"})
	if err != nil {
		t.Fatal(err)
	}
	if started.Tune.State != db.TuneQueued || started.Tune.Baseline != "default" || started.JobID == 0 {
		t.Fatalf("started %+v", started)
	}
	emb := &countingEmbedder{Embedder: embed.NewLocal(384)}
	v, err := tune.Run(s.ctx, s.pool, emb, s.queue, started.Tune.ID, tune.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := v.Result
	if v.State != db.TuneSucceeded || r == nil || !r.Created || r.Reweight == nil || r.Search.Shrink == 0 {
		t.Fatalf("tune %+v (result %+v)", v, r)
	}
	t.Logf("labels %+v; held-out baseline %+v tuned %+v; gain %+v; shrink %v; weights %v; fusion %+v", r.Labels, r.HeldOut.Baseline, r.HeldOut.Tuned, r.Gain, r.Search.Shrink, r.Weights, r.Fusion)
	if r.Gain.Verdict != "better" || r.Gain.CI95[0] <= 0 || r.HeldOut.Tuned.MRR <= r.HeldOut.Baseline.MRR {
		t.Errorf("gain %+v (held out: baseline %+v, tuned %+v), want better", r.Gain, r.HeldOut.Baseline, r.HeldOut.Tuned)
	}
	if r.Labels.MaxPerKey != tune.DefaultMaxSearches/10 || r.Labels.Keys != 0 || r.Labels.MostPerKey != 0 {
		t.Errorf("labels %+v: want the default cap reported and no search key (the searches had none)", r.Labels)
	}
	if r.Fusion == r.Baseline.Fusion && r.Weights["name"] >= 0.15 {
		t.Errorf("weights %v, fusion %+v: the misleading name should weigh less than the default's (0.15, lexical 1.5)", r.Weights, r.Fusion)
	}
	if r.Train.Tuned.MRR < r.Train.Baseline.MRR {
		t.Errorf("train MRR tuned %v < baseline %v: the baseline was a starting point", r.Train.Tuned.MRR, r.Train.Baseline.MRR)
	}
	if got := emb.texts.Load(); got != int64(r.Search.QueryEmbeddings) || got != int64(distinct(queries)) {
		t.Errorf("embedded %d texts, result says %d, distinct labelled queries %d", got, r.Search.QueryEmbeddings, distinct(queries))
	}
	p, err := profiles.Get(s.ctx, s.pool, "learned")
	if err != nil {
		t.Fatal(err)
	}
	var gain tune.Gain
	if p.Tune != nil {
		if err := json.Unmarshal(p.Tune.Gain, &gain); err != nil {
			t.Fatal(err)
		}
	}
	if p.Fusion == nil || *p.Fusion != r.Fusion {
		t.Errorf("profile fusion weights %+v, the tune's %+v", p.Fusion, r.Fusion)
	}
	if p.Active || p.Building == nil || p.Tune == nil || p.Tune.TuneID != v.ID || gain != r.Gain {
		t.Errorf("profile %+v (gain %+v): want inactive, building its first set, with the tune's evidence", p, gain)
	}
	for k, w := range r.Weights {
		if p.Weights[k] != w {
			t.Errorf("profile weights %v, tune weights %v", p.Weights, r.Weights)
			break
		}
	}
	// the profile's re-weight was queued with it (the only reweight job of this database)
	if job := rivertest.RequireInserted(s.ctx, t, riverpgxv5.New(s.pool), &jobs.ReweightArgs{}, nil); job.ID != r.Reweight.JobID || job.Args.Profile != "learned" || job.Args.SetID != p.Building.ID {
		t.Errorf("re-weight job %d %+v, want job %d for profile learned and set %d", job.ID, job.Args, r.Reweight.JobID, p.Building.ID)
	}

	// Running the tune again (a retried job) changes nothing.
	again, err := tune.Run(s.ctx, s.pool, emb, s.queue, v.ID, tune.RunOptions{})
	if err != nil || again.Result.Reweight == nil || *again.Result.Reweight != *r.Reweight {
		t.Errorf("second run: %v %+v", err, again.Result)
	}
}

func distinct(uses []testfactory.Use) int {
	seen := map[string]bool{}
	for _, u := range uses {
		seen[u.Query] = true
	}
	return len(seen)
}

// TestTuneRefusesWhatItCannotDo: too few labelled searches, a taken profile name, an unknown
// baseline and bad options are refused before anything is stored; a tune whose labels
// vanished before its job ran fails without creating a profile.
func TestTuneRefusesWhatItCannotDo(t *testing.T) {
	t.Parallel()
	tools, queries := testfactory.MisleadingCatalog()
	s := newSetup(t, "ws", tools, 0)
	testfactory.Labels(s.ctx, t, s.svc, "ws", queries[:15])

	var few *tune.TooFewLabelsError
	if _, err := tune.Start(s.ctx, s.pool, s.queue, tune.Options{Profile: "learned"}); !errors.As(err, &few) || few.Searches > 15 {
		t.Fatalf("15 labelled searches: %v, want TooFewLabelsError", err)
	}
	// below the floor, an operator cannot lower the bar
	var inv *tune.InvalidOptionsError
	if _, err := tune.Start(s.ctx, s.pool, s.queue, tune.Options{MinSearches: 5}); !errors.As(err, &inv) {
		t.Errorf("min_searches 5: %v, want InvalidOptionsError", err)
	}
	for _, o := range []tune.Options{{Profile: "Bad Name"}, {Holdout: 0.9}, {SinceDays: -1}, {MaxSearches: 10}} {
		if _, err := tune.Start(s.ctx, s.pool, s.queue, o); !errors.As(err, &inv) {
			t.Errorf("%+v: %v, want InvalidOptionsError", o, err)
		}
	}
	var exists *tune.ProfileExistsError
	if _, err := tune.Start(s.ctx, s.pool, s.queue, tune.Options{Profile: "default"}); !errors.As(err, &exists) {
		t.Errorf("profile default: %v, want ProfileExistsError", err)
	}
	var nf *profiles.NotFoundError
	if _, err := tune.Start(s.ctx, s.pool, s.queue, tune.Options{Baseline: "nope"}); !errors.As(err, &nf) {
		t.Errorf("baseline nope: %v, want profiles.NotFoundError", err)
	}
	if ts, err := tune.List(s.ctx, s.pool); err != nil || len(ts) != 0 {
		t.Fatalf("refused tunes were stored: %v %v", ts, err)
	}

	// Enough labels when it starts, none left when it runs.
	testfactory.Labels(s.ctx, t, s.svc, "ws", queries[15:])
	started, err := tune.Start(s.ctx, s.pool, s.queue, tune.Options{Profile: "learned"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(s.ctx, `DELETE FROM search_labels`); err != nil {
		t.Fatal(err)
	}
	_, err = tune.Run(s.ctx, s.pool, embed.NewLocal(384), s.queue, started.Tune.ID, tune.RunOptions{})
	if !errors.As(err, &few) || !tune.Permanent(err) {
		t.Fatalf("run without labels: %v, want a permanent TooFewLabelsError", err)
	}
	if err := tune.Fail(s.ctx, s.pool, started.Tune.ID, err); err != nil {
		t.Fatal(err)
	}
	v, err := tune.Get(s.ctx, s.pool, started.Tune.ID)
	if err != nil || v.State != db.TuneFailed || v.Error == nil || !strings.Contains(*v.Error, "too few labels") {
		t.Errorf("failed tune: %+v %v", v, err)
	}
	if _, err := profiles.Get(s.ctx, s.pool, "learned"); !errors.As(err, &nf) {
		t.Errorf("a failed tune created its profile: %v", err)
	}
}

// TestTuneOnTheMultiDomainSet seeds labels from the multi-domain development set (743
// tools of 49 real MCP servers, 581 hand-written queries: the searches whose gold tools the
// default search returned, reported as feedback) and tunes against the default profile. It
// asserts what must hold on any data and logs the numbers docs/profiles.md quotes.
func TestTuneOnTheMultiDomainSet(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (a whole server, evaluation or concurrent run): the full suite, make test, runs it")
	}
	t.Parallel()
	ds, err := eval.Load("../../testdata/mcp-multidomain")
	if err != nil {
		t.Fatal(err)
	}
	s := newSetup(t, "md", ds.Tools, 10)
	uses := make([]testfactory.Use, len(ds.Queries))
	for i, q := range ds.Queries {
		uses[i] = testfactory.Use{Query: q.Query, Tools: q.Gold}
	}
	n := testfactory.Labels(s.ctx, t, s.svc, "md", uses)
	started, err := tune.Start(s.ctx, s.pool, s.queue, tune.Options{Profile: "md-tuned"})
	if err != nil {
		t.Fatal(err)
	}
	v, err := tune.Run(s.ctx, s.pool, embed.NewLocal(384), s.queue, started.Tune.ID, tune.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := v.Result
	t.Logf("%d of %d queries labelled; labels %+v; %d weightings scored", n, len(ds.Queries), r.Labels, r.Search.Weightings)
	t.Logf("train: baseline %+v tuned %+v", r.Train.Baseline, r.Train.Tuned)
	t.Logf("held out: baseline %+v tuned %+v", r.HeldOut.Baseline, r.HeldOut.Tuned)
	t.Logf("gain %+v; shrink %v; created %v; weights %v; fusion %+v", r.Gain, r.Search.Shrink, r.Created, r.Weights, r.Fusion)
	if r.Train.Tuned.MRR < r.Train.Baseline.MRR {
		t.Errorf("train MRR tuned %v < baseline %v", r.Train.Tuned.MRR, r.Train.Baseline.MRR)
	}
	if d := r.HeldOut.Tuned.MRR - r.HeldOut.Baseline.MRR - r.Gain.Mean; d > 1e-9 || d < -1e-9 {
		t.Errorf("gain %v is not the held-out MRR difference %v", r.Gain.Mean, r.HeldOut.Tuned.MRR-r.HeldOut.Baseline.MRR)
	}
	if r.Gain.CI95[0] > r.Gain.Mean || r.Gain.CI95[1] < r.Gain.Mean {
		t.Errorf("interval %v does not hold the mean %v", r.Gain.CI95, r.Gain.Mean)
	}
	_, err = profiles.Get(s.ctx, s.pool, "md-tuned")
	var nf *profiles.NotFoundError
	if r.Created != (err == nil) || (!r.Created && !errors.As(err, &nf)) || r.Created != (r.Search.Shrink > 0) {
		t.Errorf("created %v, shrink %v, the profile: %v", r.Created, r.Search.Shrink, err)
	}
	if r.Labels.Train+r.Labels.HeldOut+r.Labels.Unranked != r.Labels.Searches || r.Labels.Searches != n {
		t.Errorf("label counts %+v, %d searches labelled", r.Labels, n)
	}
}

// TestTuneInterruptedResumes: a tune cut off in the middle of its scan (its process killed,
// its attempt timed out) has written nothing but its progress; running it again (River's
// retry) finishes it, with one profile and one re-weight.
func TestTuneInterruptedResumes(t *testing.T) {
	t.Parallel()
	tools, queries := staleNames()
	s := newSetup(t, "ws", tools, 3)
	testfactory.Labels(s.ctx, t, s.svc, "ws", queries)
	started, err := tune.Start(s.ctx, s.pool, s.queue, tune.Options{Profile: "learned"})
	if err != nil {
		t.Fatal(err)
	}
	// queries embedded in another space than the stored vectors would rank nothing real
	var space *embed.SpaceMismatchError
	if _, err := tune.Run(s.ctx, s.pool, embed.NewLocal(64), s.queue, started.Tune.ID, tune.RunOptions{}); !errors.As(err, &space) {
		t.Fatalf("run with a 64-dimension embedder: %v, want SpaceMismatchError", err)
	}
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	_, err = tune.Run(ctx, s.pool, embed.NewLocal(384), s.queue, started.Tune.ID, tune.RunOptions{
		OnProgress: func(phase string, done, total int) {
			if phase == "scan" {
				cancel()
			}
		}})
	if !errors.Is(err, context.Canceled) || tune.Permanent(err) {
		t.Fatalf("interrupted run: %v, want a context error that is retried", err)
	}
	v, err := tune.Get(s.ctx, s.pool, started.Tune.ID)
	if err != nil || v.State != db.TuneRunning || v.Result != nil {
		t.Fatalf("after the interruption: %+v %v", v, err)
	}
	var nf *profiles.NotFoundError
	if _, err := profiles.Get(s.ctx, s.pool, "learned"); !errors.As(err, &nf) {
		t.Fatalf("an interrupted tune created its profile: %v", err)
	}

	// The second run reports each phase; the weight search counts the weightings scored
	// against the most it could score.
	var phases []string
	searched := false
	v, err = tune.Run(s.ctx, s.pool, embed.NewLocal(384), s.queue, started.Tune.ID, tune.RunOptions{
		OnProgress: func(phase string, done, total int) {
			if len(phases) == 0 || phases[len(phases)-1] != phase {
				phases = append(phases, phase)
			}
			if phase == "search" && done > 0 {
				searched = true
				if done > total {
					t.Errorf("search progress %d/%d", done, total)
				}
			}
		}})
	if err != nil || v.State != db.TuneSucceeded || !v.Result.Created {
		t.Fatalf("second run: %+v %v", v, err)
	}
	if want := []string{"labels", "embed", "lexical", "scan", "search", "evaluate"}; !slices.Equal(phases, want) || !searched {
		t.Errorf("phases %v (search counted: %v), want %v with the search counted", phases, searched, want)
	}
	var profilesMade, reweights int
	if err := s.pool.QueryRow(s.ctx, `SELECT (SELECT count(*) FROM weight_profiles WHERE tune_id = $1),
		(SELECT count(*) FROM river_job WHERE kind = 'reweight' AND args ->> 'profile' = 'learned')`, v.ID).Scan(&profilesMade, &reweights); err != nil {
		t.Fatal(err)
	}
	if profilesMade != 1 || reweights != 1 {
		t.Errorf("%d profiles and %d re-weight jobs from the tune, want 1 and 1", profilesMade, reweights)
	}
}
