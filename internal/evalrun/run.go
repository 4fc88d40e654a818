// Package evalrun is the evaluation run of `toolgate eval DIR`: a dataset loaded into a
// fresh database, enriched and embedded through River as a served catalog is, every query
// searched through the search service of POST /search for every configuration (mode ×
// profile × plan × setting variation), scored with internal/eval, and the database dropped.
// The command parses the flags and prints; internal/eval holds the metrics and the dataset
// format.
package evalrun

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/confidence"
	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/eval"
	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/plan"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/riverdb"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/setup"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/internal/vectors"
	"github.com/toolgate/toolgate/jobs"
)

// evalSource is the catalog source the dataset's tools are loaded into.
const evalSource = "eval"

// evalDBPrefix starts the name of every isolated evaluation database.
const evalDBPrefix = "toolgate_eval_"

// enrichFailures is what went wrong in the enrichment of the evaluation catalog: the run
// goes on, searching those tools with what they have, and its report says so.
type enrichFailures struct {
	// Jobs discarded or cancelled (a provider that kept failing): their tools have no vectors.
	Jobs     int    `json:"jobs"`
	JobError string `json:"job_error,omitempty"` // the last error of one of them
	// Tools one of whose steps was malformed beyond repair: stored without that step.
	Tools int      `json:"tools"`
	Steps []string `json:"steps,omitempty"` // up to 5, as "tool: step: reason"
}

func (f enrichFailures) any() bool { return f.Jobs > 0 || f.Tools > 0 }

// warnings are f as lines for stderr.
func (f enrichFailures) warnings() []string {
	var out []string
	if f.Jobs > 0 {
		out = append(out, fmt.Sprintf("%d enrichment jobs failed (last error of one: %s); their tools are searched without vectors", f.Jobs, f.JobError))
	}
	if f.Tools > 0 {
		out = append(out, fmt.Sprintf("%d tools were stored without an enrichment step whose output was malformed beyond repair (%s)", f.Tools, strings.Join(f.Steps, "; ")))
	}
	return out
}

// PlanDefault is the --plan value "default": the request names no plan, as most callers of
// POST /search do, and the search applies its default (TOOLGATE_SEARCH_PLAN).
const PlanDefault plan.Mode = ""

// evalConfig is one configuration of a run: mode, profile, plan and search settings.
type evalConfig struct {
	mode      search.Mode
	profile   db.WeightProfile // the profile's row; Name "" for lexical, which reads no vectors
	plan      plan.Mode        // PlanDefault: the request names no plan
	variation []SettingChange
	label     string
}

// Env is what a run takes from its process.
type Env struct {
	Config   config.Config
	Log      *slog.Logger
	Observer *provider.Observer // the providers' metrics and traces; nil for none
	// Progress receives what the run does, a line each ("eval: ..."): the database it
	// made, the enrichment's progress, each configuration's time, warnings.
	Progress io.Writer
}

// Options are what `toolgate eval DIR` was asked for.
type Options struct {
	Dir          string
	Ks           []int // ascending
	Modes        []search.Mode
	Profiles     []string    // "" is the active profile; nil with AllProfiles
	Plans        []plan.Mode // PlanDefault: what POST /search does without a plan
	AllProfiles  bool
	Set          []SettingChange   // applied to every configuration
	Variations   [][]SettingChange // the cartesian product of --vary, one entry per variation ([nil] without)
	Questions    int
	QueriesLimit int
	Out          string   // append each configuration's report to this file ("": none)
	PerQuery     string   // write each query's outcome to this file ("": none)
	Keep         bool     // keep the evaluation database
	Kinds        []string // only the queries of these kinds (nil: all)
	// Traffic makes the run a learning curve (RunCurves): the queries it selects are
	// replayed as an agent's traffic, the others measured.
	Traffic *TrafficSplit
	// CurveSVG is where `--curve-svg` writes the learning curves' chart (CurveSVG; "": none).
	CurveSVG string
	Args     []string // the command line, recorded in every line
}

// Run loads the dataset of o.Dir into a fresh database on the server of DATABASE_URL,
// enriches and embeds it with the configured providers through River, runs every query
// through the search service of POST /search for every configuration, scores, and drops the
// database. With Out each configuration's line is appended to the file as soon as it is
// done. It returns one line per configuration; interrupted (ctx done), it returns the lines
// of the configurations it finished and ctx.Err().
func Run(ctx context.Context, env Env, o Options) ([]Line, error) {
	s, err := start(ctx, env, o)
	if err != nil {
		return nil, err
	}
	defer s.close()
	queryStart := time.Now()
	var runs []Line
	for _, c := range s.configs {
		line, err := s.r.runConfig(ctx, s.pool, c)
		if err != nil {
			if ctx.Err() != nil {
				fmt.Fprintf(env.Progress, "eval: interrupted in %s; %d of %d configurations finished%s\n",
					c.label, len(runs), len(s.configs), outNote(o.Out))
				// not the search's error, which only says the same about the query it was in
				return runs, ctx.Err()
			}
			return nil, err
		}
		runs = append(runs, line)
	}
	s.finish(queryStart)
	return runs, nil
}

// session is a run's evaluation database, enriched, with its configurations.
type session struct {
	r       *runner
	pool    *pgxpool.Pool
	configs []evalConfig
	started time.Time
	closers []func()
}

func (s *session) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

func (s *session) finish(queryStart time.Time) {
	fmt.Fprintf(s.r.env.Progress, "eval: total %.1fs (enrichment %.1fs, queries %.1fs)%s\n",
		time.Since(s.started).Seconds(), s.r.enrichSecs, time.Since(queryStart).Seconds(), outNote(s.r.o.Out))
}

// start checks everything that needs no database, then creates, migrates and enriches the
// evaluation database.
func start(ctx context.Context, env Env, o Options) (*session, error) {
	r, err := prepare(ctx, env, o)
	if err != nil {
		return nil, err
	}
	s := &session{r: r, started: time.Now(), closers: []func(){r.close}}
	dbURL, drop, err := createDB(ctx, env, o.Keep)
	if err != nil {
		s.close()
		return nil, err
	}
	s.closers = append(s.closers, drop)
	if s.pool, err = postgres.Connect(ctx, dbURL); err != nil {
		s.close()
		return nil, err
	}
	s.closers = append(s.closers, s.pool.Close)
	if s.configs, err = r.migrate(ctx, s.pool); err != nil {
		s.close()
		return nil, err
	}
	fmt.Fprintf(env.Progress, "eval: run %s: %d configurations × %d queries of %s (sha256 %.12s)\n",
		r.info.ID, len(s.configs), len(r.queries), r.ds.Info.Path, r.ds.Info.SHA256)
	enrichStart := time.Now()
	if err := r.enrich(ctx, s.pool); err != nil {
		s.close()
		return nil, err
	}
	r.enrichSecs = time.Since(enrichStart).Seconds()
	return s, nil
}

// runner is one run's state between its steps.
type runner struct {
	env        Env
	o          Options
	base       search.Settings // the configured search settings, before --set and --vary
	vocabulary int             // entries of the planner's vocabulary
	ds         *eval.Dataset
	queries    []eval.Query
	traffic    []eval.Query // with Options.Traffic: the queries a learning curve replays
	test       []eval.Query // and those it measures
	info       *RunInfo
	out        *evalOut
	perQuery   *perQueryOut
	embedder   embed.Embedder
	failures   enrichFailures
	enrichSecs float64
	curves     int // learning curves run: each names its keys after its number
}

// prepare fails, before any database work, on everything that can fail without one: the
// settings (the planner's vocabulary, the reranker), the dataset, the output files.
func prepare(ctx context.Context, env Env, o Options) (*runner, error) {
	r := &runner{env: env, o: o}
	var err error
	if r.base, err = setup.SearchSettings(env.Config, env.Observer); err != nil {
		return nil, err
	}
	if env.Config.PlanVocabulary != "" {
		v, err := plan.LoadVocabulary(env.Config.PlanVocabulary)
		if err != nil {
			return nil, err
		}
		r.vocabulary = len(v)
	}
	if r.ds, err = eval.Load(o.Dir); err != nil {
		return nil, err
	}
	if r.queries, err = ofKinds(r.ds.Queries, o.Kinds); err != nil {
		return nil, err
	}
	r.queries = spread(r.queries, o.QueriesLimit)
	if o.Traffic != nil {
		if r.traffic, r.test, err = o.Traffic.split(r.queries); err != nil {
			return nil, err
		}
	}
	r.info = newRunInfo(ctx, o.Args)
	if o.Out != "" {
		if r.out, err = openEvalOut(o.Out, r.ds.Info); err != nil {
			return nil, err
		}
	}
	if o.PerQuery != "" {
		if r.perQuery, err = createPerQueryOut(o.PerQuery); err != nil {
			r.close()
			return nil, err
		}
	}
	return r, nil
}

func (r *runner) close() {
	_ = r.out.Close()
	_ = r.perQuery.Close()
}

// migrate makes the evaluation database's schema and returns the run's configurations
// (unknown profiles fail now, not after the enrichment).
func (r *runner) migrate(ctx context.Context, pool *pgxpool.Pool) ([]evalConfig, error) {
	if err := postgres.MigrateUp(ctx, pool); err != nil {
		return nil, err
	}
	if _, err := db.New(pool).EnsureSearchLogPartitions(ctx, 2); err != nil {
		return nil, err
	}
	profiles, err := evalProfiles(ctx, pool, r.o)
	if err != nil {
		return nil, err
	}
	return evalConfigs(r.o, profiles), nil
}

// enrich loads the catalog and brings every index it is searched by up to date.
func (r *runner) enrich(ctx context.Context, pool *pgxpool.Pool) error {
	r.embedder = setup.Embedder(r.env.Config, r.env.Observer)
	if err := embed.EnsureSpace(ctx, pool, r.embedder); err != nil {
		return err
	}
	// The catalog goes in as users' catalogs do: imported (lexically searchable at once),
	// enriched by River jobs, whose debounced lexical_index runs bring the enriched fields
	// into the index.
	var err error
	if r.failures, err = enrichDataset(ctx, r.env, pool, r.embedder, r.ds.Tools, r.o.Questions); err != nil {
		return err
	}
	for _, w := range r.failures.warnings() {
		fmt.Fprintf(r.env.Progress, "eval: warning: %s\n", w)
	}
	// The last debounced lexical_index run may still be due: do its work now. Then every
	// impact is computed with the final average document length: which postings a term
	// fetches then depends on the catalog alone, not on when during the enrichment the last
	// recompute ran (a served index recomputes them when the average drifts by Drift), so
	// two runs rank alike.
	if _, err := lexical.Flush(ctx, pool); err != nil {
		return err
	}
	if _, err := lexical.Reimpact(ctx, pool); err != nil {
		return err
	}
	// So may the build of the other profiles' deferred indexes: every profile is measured on
	// an indexed set, as it is served.
	if _, err := vectors.BuildDeferredIndexes(ctx, pool); err != nil {
		return err
	}
	// Every configuration is measured on planner statistics of the whole catalog: without
	// them the first one ran on plans chosen for empty tables (the vector branch scanning its
	// set exactly instead of walking the HNSW index: other recall, other latency), and the
	// configurations after autovacuum's ANALYZE on others.
	_, err = pool.Exec(ctx, "ANALYZE")
	return err
}

// runConfig searches and scores every query of one configuration, and appends its line to
// the --out file.
func (r *runner) runConfig(ctx context.Context, pool *pgxpool.Pool, c evalConfig) (Line, error) {
	st := applySettings(r.base, r.o.Set, c.variation)
	svc := search.New(pool, r.embedder, st, r.env.Log)
	effective := effectivePlan(c, st)
	perK := evalPerK(st, effective, r.o.Ks)
	cfg := r.configRecord(c, st, effective, perK)
	var planned planStats
	answers := map[string]search.Response{}
	t := time.Now()
	ranked := searchFunc(svc, search.Request{Mode: c.mode, Profile: c.profile.Name, Plan: c.plan}, r.ds.Tools, &planned, answers, r.o.Ks[len(r.o.Ks)-1])
	rep, err := eval.Run(ctx, r.queries, ranked,
		eval.Options{Ks: r.o.Ks, PerK: perK, Config: cfg, Dataset: &r.ds.Info, PerQuery: r.perQuery.writer(r.info.ID, c.label),
			Confidence: func(q string) (float64, bool) { v, ok := answers[q]; return v.Confidence, ok }, ConfidenceThreshold: search.ConfidenceThreshold,
			Signals: func(q string) *confidence.Inputs {
				if v, ok := answers[q]; ok {
					return &v.ConfidenceInputs
				}
				return nil
			}})
	if err != nil {
		return Line{}, err
	}
	var warnings []string
	if effective != plan.ModeNone {
		// rep.Config is cfg: what the planner did goes into the report
		warnings = planned.warnings(effective, c.plan == PlanDefault, r.env.Config, r.vocabulary)
		cfg["plan_outcome"] = planned
		if len(warnings) > 0 {
			cfg["warnings"] = warnings
		}
	}
	line := Line{Run: r.info, Label: c.label, Report: rep}
	if r.out != nil {
		if err := r.out.write(line); err != nil {
			return Line{}, err
		}
	}
	fmt.Fprintf(r.env.Progress, "eval: %s: %d queries in %.1fs\n", c.label, len(r.queries), time.Since(t).Seconds())
	for _, w := range warnings {
		fmt.Fprintf(r.env.Progress, "eval: warning: %s\n", w) // right after the line naming the configuration
	}
	return line, nil
}

// effectivePlan is the plan the searches of c run with: a request that names none gets
// the default plan.
func effectivePlan(c evalConfig, st search.Settings) plan.Mode {
	return cmp.Or(c.plan, st.DefaultPlan, plan.ModeNone)
}

// configRecord is the report's config of configuration c, searched with st.
func (r *runner) configRecord(c evalConfig, st search.Settings, effective plan.Mode, perK bool) map[string]any {
	cfg := map[string]any{
		"mode": c.mode, "plan": effective, "plan_default": c.plan == PlanDefault, "ks": r.o.Ks, "questions": r.o.Questions, "queries_limit": r.o.QueriesLimit,
		"embedder": r.embedder.Model(), "dims": r.embedder.Dims(), "enricher": setup.Enricher(r.env.Config, r.env.Observer).Model(),
		"tools": len(r.ds.Tools), "enrich_seconds": round1(r.enrichSecs),
		"search": SettingsRecord(st, evalComponents(r.env.Config, r.vocabulary)), "search_per_k": perK,
	}
	if r.failures.any() {
		cfg["enrich_failed"] = r.failures
	}
	if c.mode != search.ModeLexical {
		cfg["profile"] = c.profile.Name
		cfg["profile_active"] = c.profile.IsActive
		cfg["profile_strategy"] = c.profile.Strategy
		cfg["profile_weights"] = c.profile.Weights
	}
	if set := append(slices.Clip(r.o.Set), c.variation...); len(set) > 0 {
		m := make(map[string]string, len(set))
		for _, ch := range set {
			m[ch.key] = ch.value
		}
		cfg["set"] = m
	}
	return cfg
}

func outNote(out string) string {
	if out == "" {
		return ""
	}
	return "; results in " + out
}

// evalConfigs lists the configurations of a run: mode × profile × plan × variation, in
// that order (variations innermost, so the rows a --vary compares are adjacent).
func evalConfigs(o Options, profiles []db.WeightProfile) []evalConfig {
	var out []evalConfig
	for _, mode := range o.Modes {
		ps := profiles
		if mode == search.ModeLexical {
			// The lexical branch reads no vectors: every profile ranks the same.
			ps = []db.WeightProfile{{}}
		}
		for _, profile := range ps {
			for _, pm := range o.Plans {
				for _, v := range o.Variations {
					label := string(mode)
					if mode != search.ModeLexical {
						label += " / " + profile.Name
					}
					switch pm {
					case PlanDefault:
						label += " / default plan"
					case plan.ModeNone:
					default:
						label += " / plan " + string(pm)
					}
					if len(v) > 0 {
						label += " / " + changesLabel(v)
					}
					out = append(out, evalConfig{mode: mode, profile: profile, plan: pm, variation: v, label: label})
				}
			}
		}
	}
	return out
}

// evalPerK says whether a configuration must search once per K to be scored as POST /search
// answers k=K (eval.Options.PerK). One search for max(Ks), each K scoring its top K, is
// exact only when a search's top K does not depend on the k it was asked for. Search uses k
// (internal/search, Service.Search) as:
//   - per_group = k: the statement's top k per intent, cut from one total order (name
//     match, fused score, tool id), so a smaller k gets a prefix;
//   - cand = max(Candidates, k), and from it ef_search and the lexical shortlist: the same
//     for every k ≤ Candidates, not above (more candidates change the fused scores);
//   - with a plan, plan.Merge's per-intent share of k, and with a reranker, the cut of the
//     reranked list: both change the order of the top K itself.
//
// So one search suffices without a plan, without a reranker and with max(Ks) ≤ Candidates;
// TestEvalPlannedSearchesPerK checks the prefix property on a real database.
func evalPerK(st search.Settings, pm plan.Mode, ks []int) bool {
	return pm != plan.ModeNone || st.Reranker != nil || ks[len(ks)-1] > st.Candidates
}

// planStats counts what the planner made of a configuration's queries (from the plans of
// the max(Ks) searches): a planner that cannot act, such as the heuristic one without a
// vocabulary, shows up here instead of as silently unchanged scores.
type planStats struct {
	Queries   int `json:"queries"`
	Split     int `json:"split"`     // plans of more than one intent
	Rewritten int `json:"rewritten"` // plans whose rewritten query differs from the query
	Fallbacks int `json:"fallbacks"` // LLM plans that fell back to the heuristic plan
}

func (p *planStats) add(pl *plan.Plan) {
	p.Queries++
	if pl == nil {
		return // a default plan of one task is dropped: the plain search
	}
	if len(pl.Intents) > 1 {
		p.Split++
	}
	if pl.Rewritten != pl.Original {
		p.Rewritten++
	}
	if pl.Fallback != "" {
		p.Fallbacks++
	}
}

// warnings says what the planner did not do that the plan mode asks for: split for
// decompose and full, rewrite for rewrite, and LLM fallbacks. The default plan (the one
// POST /search uses when a request names none, isDefault) warns only of fallbacks: that it
// split no query of a dataset of one-task queries is how the server behaves too, and its
// plan_outcome says so.
func (p *planStats) warnings(mode plan.Mode, isDefault bool, c config.Config, vocabulary int) []string {
	var out []string
	if p.Fallbacks > 0 {
		out = append(out, fmt.Sprintf("plan %s: the LLM planner fell back to the heuristic plan on %d of %d queries", mode, p.Fallbacks, p.Queries))
	}
	if isDefault {
		return out
	}
	hint := ""
	if c.Planner == plan.NameHeuristic && vocabulary == 0 {
		hint = "; the heuristic planner has no vocabulary, so it splits only requests of several tasks: " +
			"to split by entity set TOOLGATE_PLAN_VOCABULARY to a JSON file of the catalog's names (docs/planning.md); " +
			"on queries of one task each the scores are those of --plan none"
	}
	if (mode == plan.ModeDecompose || mode == plan.ModeFull) && p.Split == 0 {
		out = append(out, fmt.Sprintf("plan %s: the planner split 0 of %d queries%s", mode, p.Queries, hint))
	}
	if mode == plan.ModeRewrite && p.Rewritten == 0 {
		out = append(out, fmt.Sprintf("plan %s: the planner rewrote 0 of %d queries%s", mode, p.Queries, hint))
	}
	return out
}

// evalProfiles returns the profiles to compare: every profile of the evaluation database
// with --profile all, else the named ones, which must exist there ("" is the active one).
func evalProfiles(ctx context.Context, pool *pgxpool.Pool, o Options) ([]db.WeightProfile, error) {
	ps, err := db.New(pool).ListProfiles(ctx)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]db.WeightProfile, len(ps))
	var names []string
	for _, p := range ps {
		byName[p.Name] = p
		if p.IsActive {
			byName[""] = p
		}
		names = append(names, p.Name)
	}
	if o.AllProfiles {
		return ps, nil
	}
	out := make([]db.WeightProfile, 0, len(o.Profiles))
	for _, name := range o.Profiles {
		p, ok := byName[name]
		if !ok {
			if name == "" {
				return nil, errors.New("the evaluation database has no active weight profile")
			}
			return nil, &OptionError{Msg: fmt.Sprintf("--profile: no weight profile named %q (have %s)", name, strings.Join(names, ", "))}
		}
		out = append(out, p)
	}
	return out, nil
}

// spread returns n queries evenly spaced over qs (all of them when n is 0 or too large), so
// that a subset keeps the dataset's mix of kinds.
func spread(qs []eval.Query, n int) []eval.Query {
	if n <= 0 || n >= len(qs) {
		return qs
	}
	out := make([]eval.Query, n)
	for i := range out {
		out[i] = qs[i*len(qs)/n]
	}
	return out
}

func round1(f float64) float64 { return float64(int(f*10+0.5)) / 10 }

// searchFunc ranks with the search service of POST /search and returns the tools' names as
// the dataset spells them: the original names of tools, which the catalog may hold under
// another name (catalog.CatalogName) in the eval source's namespace. The plans of the
// searches for maxK go to planned, their answer confidences and the inputs of their
// confidence models to confidence (by query; the responses without their results).
func searchFunc(svc *search.Service, base search.Request, tools []catalog.Tool, planned *planStats, confidence map[string]search.Response, maxK int) eval.SearchFunc {
	original := make(map[string]string, len(tools))
	for _, t := range tools {
		original[catalog.ToolName(evalSource, t.Name)] = t.Name
	}
	return func(ctx context.Context, query string, k int) ([]string, error) {
		r := base
		r.Query, r.K = query, k
		resp, err := svc.Search(ctx, search.Internal(), r)
		if err != nil {
			return nil, err
		}
		if k == maxK {
			planned.add(resp.Plan)
			confidence[query] = search.Response{Confidence: resp.Confidence, ConfidenceInputs: resp.ConfidenceInputs}
		}
		names := make([]string, len(resp.Results))
		for i, r := range resp.Results {
			names[i] = original[r.Name]
		}
		return names, nil
	}
}

// createDB creates an empty database on the server of DATABASE_URL, through that
// server's `postgres` maintenance database, and returns its URL and a function that drops
// it (or, with keep, tells its name).
func createDB(ctx context.Context, env Env, keep bool) (string, func(), error) {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := evalDBPrefix + hex.EncodeToString(b)
	admin, err := pgx.Connect(ctx, DatabaseURL(env.Config.DatabaseURL, "postgres"))
	if err != nil {
		return "", nil, fmt.Errorf("connect to the maintenance database: %w", err)
	}
	defer admin.Close(ctx)
	// Raw SQL: CREATE DATABASE is DDL on a computed name; name is hex made here.
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, fmt.Errorf("create evaluation database: %w", err)
	}
	fmt.Fprintf(env.Progress, "eval: created database %s\n", name)
	drop := func() {
		if keep {
			fmt.Fprintf(env.Progress, "eval: kept database %s\n", name)
			return
		}
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(dctx, DatabaseURL(env.Config.DatabaseURL, "postgres"))
		if err == nil {
			_, err = c.Exec(dctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			c.Close(dctx)
		}
		if err != nil {
			fmt.Fprintf(env.Progress, "eval: could not drop database %s: %v\n", name, err)
			return
		}
		fmt.Fprintf(env.Progress, "eval: dropped database %s\n", name)
	}
	return DatabaseURL(env.Config.DatabaseURL, name), drop, nil
}

// DatabaseURL points a connection string (URL or keyword/value form) at database name.
func DatabaseURL(conn, name string) string {
	if u, err := url.Parse(conn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.Path = "/" + name
		return u.String()
	}
	return conn + " dbname=" + name // keyword/value form: the last dbname wins
}

// enrichDataset loads tools as the eval catalog source (which queues one enrich_tool job
// per tool), works the jobs with an in-process River client and waits until all completed.
func enrichDataset(ctx context.Context, env Env, pool *pgxpool.Pool, embedder embed.Embedder, tools []catalog.Tool, questions int) (enrichFailures, error) {
	var failures enrichFailures
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: env.Log, SearchLogKeep: env.Config.SearchLogKeep,
		SyncTimeout: env.Config.SyncTimeout, Embedder: embedder, Enricher: setup.Enricher(env.Config, env.Observer), Questions: questions,
		MCPSessionKeep: env.Config.MCPSessionKeep},
		jobs.Options{Work: true, MaxWorkers: 2 * runtime.NumCPU(), PollOnly: env.Config.RiverPollOnly})
	if err != nil {
		return failures, err
	}
	if err := rc.Start(ctx); err != nil {
		return failures, fmt.Errorf("start workers: %w", err)
	}
	// Stopped for good before the caller goes on: a lexical_index job still running (its
	// context cancelled, it returns at once) would hold the lease of the impacts' recompute
	// that the caller's lexical.Reimpact needs.
	defer func() { _ = rc.StopAndCancel(context.WithoutCancel(ctx)) }()
	if _, _, err := sources.Import(ctx, pool, jobs.NewQueue(rc), evalSource, tools); err != nil {
		return failures, err
	}
	start, lastPrint := time.Now(), time.Time{}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		counts, err := enrichJobCounts(ctx, pool)
		if err != nil {
			return failures, err
		}
		done, failed := counts["completed"], counts["discarded"]+counts["cancelled"]
		total := 0
		for _, n := range counts {
			total += n
		}
		if done+failed == total || time.Since(lastPrint) >= 5*time.Second {
			el := time.Since(start).Seconds()
			rate := "" // none before a second has passed: a rate over a few milliseconds means nothing
			if el >= 1 {
				rate = fmt.Sprintf(", %.0f tools/s", float64(done)/el)
			}
			fmt.Fprintf(env.Progress, "eval: enrichment %d/%d jobs completed (%.0fs%s)\n", done, total, el, rate)
			lastPrint = time.Now()
		}
		if done+failed == total {
			failures.Jobs = failed
			return failures, enrichFailed(ctx, pool, rc, &failures)
		}
		select {
		case <-ctx.Done():
			return failures, ctx.Err()
		case <-tick.C:
		}
	}
}

// enrichFailed fills in f: the last error of one failed job and the tools stored without a
// step, from the catalog's records.
func enrichFailed(ctx context.Context, pool *pgxpool.Pool, rc *river.Client[pgx.Tx], f *enrichFailures) error {
	if f.Jobs > 0 {
		res, err := rc.JobList(ctx, river.NewJobListParams().First(1).Kinds(jobs.EnrichToolArgs{}.Kind()).
			States(rivertype.JobStateDiscarded, rivertype.JobStateCancelled))
		if err != nil {
			return err
		}
		if len(res.Jobs) > 0 && len(res.Jobs[0].Errors) > 0 {
			errs := res.Jobs[0].Errors
			f.JobError = errs[len(errs)-1].Error
		}
	}
	// Raw SQL: a report of the evaluation database, read once.
	rows, err := pool.Query(ctx, `SELECT t.original_name, e.step, e.output ->> 'failed'
		FROM tool_enrichments e JOIN tools t ON t.id = e.tool_id AND t.content_hash = e.content_hash
		WHERE e.output ? 'failed' ORDER BY t.id, e.step`)
	if err != nil {
		return err
	}
	tools := map[string]bool{}
	for rows.Next() {
		var name, step, reason string
		if err := rows.Scan(&name, &step, &reason); err != nil {
			return err
		}
		tools[name] = true
		if len(f.Steps) < 5 {
			f.Steps = append(f.Steps, fmt.Sprintf("%s: %s: %s", name, step, reason))
		}
	}
	f.Tools = len(tools)
	return rows.Err()
}

// enrichJobCounts counts the enrich_tool jobs by state.
func enrichJobCounts(ctx context.Context, pool *pgxpool.Pool) (map[string]int, error) {
	rows, err := riverdb.CountJobs(ctx, pool, jobs.EnrichToolArgs{}.Kind())
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for _, r := range rows {
		counts[r.State] = int(r.Count)
	}
	return counts, nil
}
