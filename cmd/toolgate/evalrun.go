package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
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
	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/eval"
	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/plan"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/riverdb"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/setup"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/internal/vectors"
	"github.com/toolgate/toolgate/jobs"
)

const evalUsage = "usage: toolgate eval DIR [--k 1,5,10] [--mode hybrid|lexical|vector|all] [--profile NAME[,NAME]|all] " +
	"[--plan default|none|rewrite|decompose|full[,...]] [--set key=value]... [--vary key=v1,v2,...]... [--questions N] [--queries-limit N] " +
	"[--out FILE] [--per-query FILE] [--json] [--keep]\n       toolgate eval calls --gold FILE --pred FILE [--json]"

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

// evalRunOptions are the flags of `toolgate eval DIR`.
type evalRunOptions struct {
	dir          string
	ks           []int
	modes        []search.Mode
	profiles     []string    // "" is the active profile; nil with allProfiles
	plans        []plan.Mode // planDefault: what POST /search does without a plan
	allProfiles  bool
	set          []settingChange   // --set: applied to every configuration
	variations   [][]settingChange // --vary: the cartesian product, one entry per variation ([nil] without --vary)
	questions    int
	queriesLimit int
	out          string
	perQuery     string
	asJSON       bool
	keep         bool
}

// planDefault is the --plan value "default": the request names no plan, as most callers of
// POST /search do, and the search applies its default (TOOLGATE_SEARCH_PLAN).
const planDefault plan.Mode = ""

// evalConfig is one configuration of a run: mode, profile, plan and search settings.
type evalConfig struct {
	mode      search.Mode
	profile   db.WeightProfile // the profile's row; Name "" for lexical, which reads no vectors
	plan      plan.Mode        // planDefault: the request names no plan
	variation []settingChange
	label     string
}

// runEvalDataset is `toolgate eval DIR`: load the dataset into a fresh database on the server
// of DATABASE_URL, enrich and embed it with the configured providers through River, run
// every query through the search service of POST /search for every configuration, score,
// and drop the database. With --out each configuration's report is appended to the file as
// soon as it is done.
func runEvalDataset(ctx context.Context, env *cliEnv, args []string) error {
	o, err := parseEvalRunFlags(env, args)
	if err != nil {
		return err
	}
	// Everything that can fail without a database fails now: the settings (the planner's
	// vocabulary, the reranker), the dataset, the --out file.
	baseSettings, err := searchSettings(env)
	if err != nil {
		return err
	}
	vocabulary := 0
	if env.cfg.PlanVocabulary != "" {
		v, err := plan.LoadVocabulary(env.cfg.PlanVocabulary)
		if err != nil {
			return err
		}
		vocabulary = len(v)
	}
	ds, err := eval.Load(o.dir)
	if err != nil {
		return err
	}
	queries := spread(ds.Queries, o.queriesLimit)
	info := newEvalRunInfo(ctx, args)
	var out *evalOut
	if o.out != "" {
		if out, err = openEvalOut(o.out, ds.Info); err != nil {
			return err
		}
		defer out.Close()
	}
	var perQuery *perQueryOut
	if o.perQuery != "" {
		if perQuery, err = createPerQueryOut(o.perQuery); err != nil {
			return err
		}
		defer perQuery.Close()
	}
	started := time.Now()
	dbURL, drop, err := createEvalDB(ctx, env, o.keep)
	if err != nil {
		return err
	}
	defer drop()
	pool, err := postgres.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := postgres.MigrateUp(ctx, pool); err != nil {
		return err
	}
	if _, err := db.New(pool).EnsureSearchLogPartitions(ctx, 2); err != nil {
		return err
	}
	// Unknown profiles fail now, not after the enrichment.
	profiles, err := evalProfiles(ctx, pool, o)
	if err != nil {
		return err
	}
	configs := evalConfigs(o, profiles)
	fmt.Fprintf(env.stderr, "eval: run %s: %d configurations × %d queries of %s (sha256 %.12s)\n",
		info.ID, len(configs), len(queries), ds.Info.Path, ds.Info.SHA256)
	embedder := setup.Embedder(env.cfg, env.providerObserver())
	if err := embed.EnsureSpace(ctx, pool, embedder); err != nil {
		return err
	}
	enrichStart := time.Now()
	// The catalog goes in as users' catalogs do: imported (lexically searchable at once),
	// enriched by River jobs, whose debounced lexical_index runs bring the enriched fields
	// into the index.
	failures, err := enrichDataset(ctx, env, pool, embedder, ds.Tools, o.questions)
	if err != nil {
		return err
	}
	for _, w := range failures.warnings() {
		fmt.Fprintf(env.stderr, "eval: warning: %s\n", w)
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
	if _, err := pool.Exec(ctx, "ANALYZE"); err != nil {
		return err
	}
	enrichSecs := time.Since(enrichStart).Seconds()

	components := evalComponents(env.cfg, vocabulary)
	enricher := setup.Enricher(env.cfg, env.providerObserver()).Model()
	queryStart := time.Now()
	var runs []evalLine
	for _, c := range configs {
		st := applySettings(baseSettings, o.set, c.variation)
		svc := search.New(pool, embedder, st, env.log)
		// the plan the searches run with: a request that names none gets the default plan
		effective := cmp.Or(c.plan, st.DefaultPlan, plan.ModeNone)
		perK := evalPerK(st, effective, o.ks)
		cfg := map[string]any{
			"mode": c.mode, "plan": effective, "plan_default": c.plan == planDefault, "ks": o.ks, "questions": o.questions, "queries_limit": o.queriesLimit,
			"embedder": embedder.Model(), "dims": embedder.Dims(), "enricher": enricher,
			"tools": len(ds.Tools), "enrich_seconds": round1(enrichSecs),
			"search": settingsRecord(st, components), "search_per_k": perK,
		}
		if failures.any() {
			cfg["enrich_failed"] = failures
		}
		if c.mode != search.ModeLexical {
			cfg["profile"] = c.profile.Name
			cfg["profile_active"] = c.profile.IsActive
			cfg["profile_strategy"] = c.profile.Strategy
			cfg["profile_weights"] = c.profile.Weights
		}
		if set := append(slices.Clip(o.set), c.variation...); len(set) > 0 {
			m := make(map[string]string, len(set))
			for _, ch := range set {
				m[ch.key] = ch.value
			}
			cfg["set"] = m
		}
		var planned planStats
		t := time.Now()
		rep, err := eval.Run(ctx, queries, searchFunc(svc, search.Request{Mode: c.mode, Profile: c.profile.Name, Plan: c.plan}, ds.Tools, &planned, o.ks[len(o.ks)-1]),
			eval.Options{Ks: o.ks, PerK: perK, Config: cfg, Dataset: &ds.Info, PerQuery: perQuery.writer(info.ID, c.label)})
		if err != nil {
			if ctx.Err() != nil {
				fmt.Fprintf(env.stderr, "eval: interrupted in %s; %d of %d configurations finished%s\n",
					c.label, len(runs), len(configs), outNote(o.out))
				if len(runs) > 0 && !o.asJSON {
					_ = printEvalRuns(env, runs, o.ks, false)
				}
				// not the search's error, which only says the same about the query it was in
				return ctx.Err()
			}
			return err
		}
		var warnings []string
		if effective != plan.ModeNone {
			// rep.Config is cfg: what the planner did goes into the report
			warnings = planned.warnings(effective, env.cfg, vocabulary)
			cfg["plan_outcome"] = planned
			if len(warnings) > 0 {
				cfg["warnings"] = warnings
			}
		}
		line := evalLine{Run: info, Label: c.label, Report: rep}
		if out != nil {
			if err := out.write(line); err != nil {
				return err
			}
		}
		fmt.Fprintf(env.stderr, "eval: %s: %d queries in %.1fs\n", c.label, len(queries), time.Since(t).Seconds())
		for _, w := range warnings {
			fmt.Fprintf(env.stderr, "eval: warning: %s\n", w) // right after the line naming the configuration
		}
		runs = append(runs, line)
	}
	querySecs := time.Since(queryStart).Seconds()
	fmt.Fprintf(env.stderr, "eval: total %.1fs (enrichment %.1fs, queries %.1fs)%s\n",
		time.Since(started).Seconds(), enrichSecs, querySecs, outNote(o.out))
	return printEvalRuns(env, runs, o.ks, o.asJSON)
}

func outNote(out string) string {
	if out == "" {
		return ""
	}
	return "; results in " + out
}

// evalConfigs lists the configurations of a run: mode × profile × plan × variation, in
// that order (variations innermost, so the rows a --vary compares are adjacent).
func evalConfigs(o evalRunOptions, profiles []db.WeightProfile) []evalConfig {
	var out []evalConfig
	for _, mode := range o.modes {
		ps := profiles
		if mode == search.ModeLexical {
			// The lexical branch reads no vectors: every profile ranks the same.
			ps = []db.WeightProfile{{}}
		}
		for _, profile := range ps {
			for _, pm := range o.plans {
				for _, v := range o.variations {
					label := string(mode)
					if mode != search.ModeLexical {
						label += " / " + profile.Name
					}
					switch pm {
					case planDefault:
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
// decompose and full, rewrite for rewrite, and LLM fallbacks.
func (p *planStats) warnings(mode plan.Mode, c config.Config, vocabulary int) []string {
	hint := ""
	if c.Planner == plan.NameHeuristic && vocabulary == 0 {
		hint = "; the heuristic planner has no vocabulary (set TOOLGATE_PLAN_VOCABULARY)"
	}
	var out []string
	if (mode == plan.ModeDecompose || mode == plan.ModeFull) && p.Split == 0 {
		out = append(out, fmt.Sprintf("plan %s: the planner split 0 of %d queries%s", mode, p.Queries, hint))
	}
	if mode == plan.ModeRewrite && p.Rewritten == 0 {
		out = append(out, fmt.Sprintf("plan %s: the planner rewrote 0 of %d queries%s", mode, p.Queries, hint))
	}
	if p.Fallbacks > 0 {
		out = append(out, fmt.Sprintf("plan %s: the LLM planner fell back to the heuristic plan on %d of %d queries", mode, p.Fallbacks, p.Queries))
	}
	return out
}

func parseEvalRunFlags(env *cliEnv, args []string) (evalRunOptions, error) {
	var o evalRunOptions
	dir, rest := leadingArg(args)
	fs := newFlags("eval", env)
	k := fs.String("k", "1,5,10", "cut-offs K, comma-separated")
	mode := fs.String("mode", "hybrid", "hybrid, lexical, vector or all")
	profile := fs.String("profile", "", "weight profiles of the vector branch, comma-separated, or all (default: the active one)")
	questions := fs.Int("questions", env.cfg.Questions, "synthetic questions per tool (TOOLGATE_QUESTIONS)")
	plans := fs.String("plan", "default", "query planning: default (what POST /search does when a request names no plan: TOOLGATE_SEARCH_PLAN), none, rewrite, decompose or full, comma-separated to compare")
	var sets, varies stringList
	fs.Var(&sets, "set", "search setting key=value for every configuration (repeatable; keys: "+strings.Join(evalSettingNames(), ", ")+")")
	fs.Var(&varies, "vary", "search setting key=v1,v2,...: one configuration per value, the product over several --vary (repeatable)")
	limit := fs.Int("queries-limit", 0, "run only N queries, evenly spaced over the file (0: all)")
	outFile := fs.String("out", "", "append each configuration's report to FILE as one JSON line when it finishes")
	perQuery := fs.String("per-query", "", "write each query's ranked results and the rank of each gold tool to FILE, one JSON line per query and configuration")
	asJSON := fs.Bool("json", false, "print one JSON object")
	keep := fs.Bool("keep", false, "keep the evaluation database (its name is printed)")
	if err := parseFlags(fs, rest); err != nil {
		return o, err
	}
	if dir == "" && fs.NArg() == 1 {
		dir = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return o, &usageError{msg: evalUsage}
	}
	if dir == "" {
		return o, &usageError{msg: evalUsage}
	}
	ks, err := eval.ParseKs(*k)
	if err != nil {
		return o, &usageError{msg: "--k: " + err.Error()}
	}
	if ks[len(ks)-1] > search.MaxK {
		return o, &usageError{msg: fmt.Sprintf("--k: at most %d", search.MaxK)}
	}
	switch m := search.Mode(*mode); m {
	case search.ModeHybrid, search.ModeLexical, search.ModeVector:
		o.modes = []search.Mode{m}
	case "all":
		o.modes = []search.Mode{search.ModeLexical, search.ModeVector, search.ModeHybrid}
	default:
		return o, &usageError{msg: fmt.Sprintf("--mode: %q is not hybrid, lexical, vector or all", *mode)}
	}
	if *profile == "all" {
		o.allProfiles = true
	} else {
		o.profiles = strings.Split(*profile, ",")
	}
	for p := range strings.SplitSeq(*plans, ",") {
		if strings.TrimSpace(p) == "default" {
			o.plans = append(o.plans, planDefault)
			continue
		}
		pm, err := plan.ParseMode(strings.TrimSpace(p))
		if err != nil {
			return o, &usageError{msg: "--plan: " + err.Error()}
		}
		o.plans = append(o.plans, pm)
	}
	if o.set, o.variations, err = settingVariations(sets, varies); err != nil {
		return o, err
	}
	if *questions < 0 || *questions > 50 {
		return o, &usageError{msg: "--questions must be 0 to 50"}
	}
	if *limit < 0 {
		return o, &usageError{msg: "--queries-limit must not be negative"}
	}
	if *perQuery != "" && *perQuery == *outFile {
		return o, &usageError{msg: "--per-query and --out must be different files"}
	}
	o.dir, o.ks, o.questions, o.queriesLimit, o.out, o.perQuery, o.asJSON, o.keep = dir, ks, *questions, *limit, *outFile, *perQuery, *asJSON, *keep
	return o, nil
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, " ") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

// evalProfiles returns the profiles to compare: every profile of the evaluation database
// with --profile all, else the named ones, which must exist there ("" is the active one).
func evalProfiles(ctx context.Context, pool *pgxpool.Pool, o evalRunOptions) ([]db.WeightProfile, error) {
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
	if o.allProfiles {
		return ps, nil
	}
	out := make([]db.WeightProfile, 0, len(o.profiles))
	for _, name := range o.profiles {
		p, ok := byName[name]
		if !ok {
			if name == "" {
				return nil, errors.New("the evaluation database has no active weight profile")
			}
			return nil, &usageError{msg: fmt.Sprintf("--profile: no weight profile named %q (have %s)", name, strings.Join(names, ", "))}
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
// searches for maxK go to planned.
func searchFunc(svc *search.Service, base search.Request, tools []catalog.Tool, planned *planStats, maxK int) eval.SearchFunc {
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
		}
		names := make([]string, len(resp.Results))
		for i, r := range resp.Results {
			names[i] = original[r.Name]
		}
		return names, nil
	}
}

// createEvalDB creates an empty database on the server of DATABASE_URL, through that
// server's `postgres` maintenance database, and returns its URL and a function that drops
// it (or, with keep, tells its name).
func createEvalDB(ctx context.Context, env *cliEnv, keep bool) (string, func(), error) {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := evalDBPrefix + hex.EncodeToString(b)
	admin, err := pgx.Connect(ctx, withDatabase(env.cfg.DatabaseURL, "postgres"))
	if err != nil {
		return "", nil, fmt.Errorf("connect to the maintenance database: %w", err)
	}
	defer admin.Close(ctx)
	// Raw SQL: CREATE DATABASE is DDL on a computed name; name is hex made here.
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, fmt.Errorf("create evaluation database: %w", err)
	}
	fmt.Fprintf(env.stderr, "eval: created database %s\n", name)
	drop := func() {
		if keep {
			fmt.Fprintf(env.stderr, "eval: kept database %s\n", name)
			return
		}
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(dctx, withDatabase(env.cfg.DatabaseURL, "postgres"))
		if err == nil {
			_, err = c.Exec(dctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			c.Close(dctx)
		}
		if err != nil {
			fmt.Fprintf(env.stderr, "eval: could not drop database %s: %v\n", name, err)
			return
		}
		fmt.Fprintf(env.stderr, "eval: dropped database %s\n", name)
	}
	return withDatabase(env.cfg.DatabaseURL, name), drop, nil
}

// withDatabase points a connection string (URL or keyword/value form) at database name.
func withDatabase(conn, name string) string {
	if u, err := url.Parse(conn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.Path = "/" + name
		return u.String()
	}
	return conn + " dbname=" + name // keyword/value form: the last dbname wins
}

// enrichDataset loads tools as the eval catalog source (which queues one enrich_tool job
// per tool), works the jobs with an in-process River client and waits until all completed.
func enrichDataset(ctx context.Context, env *cliEnv, pool *pgxpool.Pool, embedder embed.Embedder, tools []catalog.Tool, questions int) (enrichFailures, error) {
	var failures enrichFailures
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: env.log, SearchLogKeep: env.cfg.SearchLogKeep,
		SyncTimeout: env.cfg.SyncTimeout, Embedder: embedder, Enricher: setup.Enricher(env.cfg, env.providerObserver()), Questions: questions,
		MCPSessionKeep: env.cfg.MCPSessionKeep},
		jobs.Options{Work: true, MaxWorkers: 2 * runtime.NumCPU(), PollOnly: env.cfg.RiverPollOnly})
	if err != nil {
		return failures, err
	}
	if err := rc.Start(ctx); err != nil {
		return failures, fmt.Errorf("start workers: %w", err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = rc.StopAndCancel(sctx)
	}()
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
			fmt.Fprintf(env.stderr, "eval: enrichment %d/%d jobs completed (%.0fs%s)\n", done, total, el, rate)
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

// printEvalRuns prints one configuration's line as a JSON object, several as
// {"runs": [...]}, or, without asJSON, Markdown tables: overall, then one per kind.
func printEvalRuns(env *cliEnv, runs []evalLine, ks []int, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if len(runs) == 1 {
			return enc.Encode(runs[0])
		}
		return enc.Encode(map[string]any{"runs": runs})
	}
	rows := make([]eval.Row, len(runs))
	for i, r := range runs {
		rows[i] = eval.Row{Label: r.Label, Report: r.Report}
	}
	fmt.Fprintf(env.stdout, "## All queries\n\n%s", eval.Table(rows, ks, ""))
	for _, kind := range runs[0].Report.Kinds() {
		fmt.Fprintf(env.stdout, "\n## %s\n\n%s", kind, eval.Table(rows, ks, kind))
	}
	fmt.Fprintf(env.stdout, "\n## Hubness\n\n%s", eval.HubnessTable(rows))
	return nil
}
