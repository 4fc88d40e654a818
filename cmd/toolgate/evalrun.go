package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/eval"
	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/plan"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/jobs"
)

const evalUsage = "usage: toolgate eval DIR [--k 1,5,10] [--mode hybrid|lexical|vector|all] [--profile NAME[,NAME]|all] " +
	"[--plan none|rewrite|decompose|full[,...]] [--questions N] [--queries-limit N] [--json] [--keep]\n       toolgate eval calls --gold FILE --pred FILE [--json]"

// evalSource is the catalog source the dataset's tools are loaded into.
const evalSource = "eval"

// evalDBPrefix starts the name of every isolated evaluation database.
const evalDBPrefix = "toolgate_eval_"

// EnrichFailedError says enrichment jobs of the evaluation catalog were discarded or
// cancelled, so some tools have no vectors and the scores would be wrong.
type EnrichFailedError struct {
	Failed int
	First  string // the last error of one failed job
}

func (e *EnrichFailedError) Error() string {
	return fmt.Sprintf("%d enrichment jobs failed (first error: %s)", e.Failed, e.First)
}

// evalRunOptions are the flags of `toolgate eval DIR`.
type evalRunOptions struct {
	dir          string
	ks           []int
	modes        []search.Mode
	profiles     []string // "" is the active profile; nil with allProfiles
	plans        []plan.Mode
	allProfiles  bool
	questions    int
	queriesLimit int
	asJSON       bool
	keep         bool
}

// evalRun is one configuration (mode, profile) and its report.
type evalRun struct {
	label  string
	report eval.Report
}

// runEvalDataset is `toolgate eval DIR`: load the dataset into a fresh database on the server
// of DATABASE_URL, enrich and embed it with the configured providers through River, run
// every query through the search service of POST /search, score, and drop the database.
func runEvalDataset(ctx context.Context, env *cliEnv, args []string) error {
	o, err := parseEvalRunFlags(env, args)
	if err != nil {
		return err
	}
	ds, err := eval.Load(o.dir)
	if err != nil {
		return err
	}
	queries := spread(ds.Queries, o.queriesLimit)
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
	embedder := newEmbedder(env.cfg, env.providerObserver())
	if err := embed.EnsureSpace(ctx, pool, embedder); err != nil {
		return err
	}
	enrichStart := time.Now()
	// The catalog goes in as users' catalogs do: imported (lexically searchable at once),
	// enriched by River jobs, whose debounced lexical_index runs bring the enriched fields
	// into the index.
	if err := enrichDataset(ctx, env, pool, embedder, ds.Tools, o.questions); err != nil {
		return err
	}
	// The last debounced lexical_index run may still be due: do its work now.
	if _, err := lexical.Flush(ctx, pool); err != nil {
		return err
	}
	enrichSecs := time.Since(enrichStart).Seconds()

	svc, err := newSearch(env, pool, nil, embedder)
	if err != nil {
		return err
	}
	queryStart := time.Now()
	var runs []evalRun
	for _, mode := range o.modes {
		ps := profiles
		if mode == search.ModeLexical && len(ps) > 1 {
			// The lexical branch reads no vectors: every profile ranks the same.
			ps = ps[:1]
		}
		for _, profile := range ps {
			for _, pm := range o.plans {
				label := string(mode) + " / " + profileLabel(profile)
				if mode == search.ModeLexical {
					label = string(mode)
				}
				if pm != plan.ModeNone {
					label += " / plan " + string(pm)
				}
				cfg := map[string]any{
					"mode": mode, "profile": profileLabel(profile), "plan": pm, "ks": o.ks, "questions": o.questions,
					"embedder": embedder.Model(), "dims": embedder.Dims(), "enricher": newEnricher(env.cfg, env.providerObserver()).Model(),
					"tools": len(ds.Tools), "enrich_seconds": round1(enrichSecs),
				}
				if mode == search.ModeLexical {
					delete(cfg, "profile")
				}
				t := time.Now()
				rep, err := eval.Run(ctx, queries, searchFunc(svc, search.Request{Mode: mode, Profile: profile, Plan: pm}, ds.Tools),
					eval.Options{Ks: o.ks, Config: cfg})
				if err != nil {
					return err
				}
				fmt.Fprintf(env.stderr, "eval: %s: %d queries in %.1fs\n", label, len(queries), time.Since(t).Seconds())
				runs = append(runs, evalRun{label: label, report: rep})
			}
		}
	}
	querySecs := time.Since(queryStart).Seconds()
	fmt.Fprintf(env.stderr, "eval: total %.1fs (enrichment %.1fs, queries %.1fs)\n",
		time.Since(started).Seconds(), enrichSecs, querySecs)
	return printEvalRuns(env, runs, o.ks, o.asJSON)
}

func parseEvalRunFlags(env *cliEnv, args []string) (evalRunOptions, error) {
	var o evalRunOptions
	dir, rest := leadingArg(args)
	fs := newFlags("eval", env)
	k := fs.String("k", "1,5,10", "cut-offs K, comma-separated")
	mode := fs.String("mode", "hybrid", "hybrid, lexical, vector or all")
	profile := fs.String("profile", "", "weight profiles of the vector branch, comma-separated, or all (default: the active one)")
	questions := fs.Int("questions", env.cfg.Questions, "synthetic questions per tool (TOOLGATE_QUESTIONS)")
	plans := fs.String("plan", "none", "query planning: none, rewrite, decompose or full, comma-separated to compare")
	limit := fs.Int("queries-limit", 0, "run only N queries, evenly spaced over the file (0: all)")
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
		pm, err := plan.ParseMode(strings.TrimSpace(p))
		if err != nil {
			return o, &usageError{msg: "--plan: " + err.Error()}
		}
		o.plans = append(o.plans, pm)
	}
	if *questions < 0 || *questions > 50 {
		return o, &usageError{msg: "--questions must be 0 to 50"}
	}
	if *limit < 0 {
		return o, &usageError{msg: "--queries-limit must not be negative"}
	}
	o.dir, o.ks, o.questions, o.queriesLimit, o.asJSON, o.keep = dir, ks, *questions, *limit, *asJSON, *keep
	return o, nil
}

// evalProfiles returns the profiles to compare: every profile of the evaluation database
// with --profile all, else the named ones, which must exist there.
func evalProfiles(ctx context.Context, pool *pgxpool.Pool, o evalRunOptions) ([]string, error) {
	ps, err := db.New(pool).ListProfiles(ctx)
	if err != nil {
		return nil, err
	}
	known := make(map[string]bool, len(ps))
	var all []string
	for _, p := range ps {
		known[p.Name] = true
		all = append(all, p.Name)
	}
	if o.allProfiles {
		return all, nil
	}
	for _, p := range o.profiles {
		if p != "" && !known[p] {
			return nil, &usageError{msg: fmt.Sprintf("--profile: no weight profile named %q (have %s)", p, strings.Join(all, ", "))}
		}
	}
	return o.profiles, nil
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

func profileLabel(p string) string {
	if p == "" {
		return "active"
	}
	return p
}

func round1(f float64) float64 { return float64(int(f*10+0.5)) / 10 }

// searchFunc ranks with the search service of POST /search and returns the tools' names as
// the dataset spells them: the original names of tools, which the catalog may hold under
// another name (catalog.CatalogName) in the eval source's namespace.
func searchFunc(svc *search.Service, base search.Request, tools []catalog.Tool) eval.SearchFunc {
	original := make(map[string]string, len(tools))
	for _, t := range tools {
		original[catalog.ToolName(evalSource, t.Name)] = t.Name
	}
	return func(ctx context.Context, query string, k int) ([]string, error) {
		r := base
		r.Query, r.K = query, k
		resp, err := svc.Search(ctx, r)
		if err != nil {
			return nil, err
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
func enrichDataset(ctx context.Context, env *cliEnv, pool *pgxpool.Pool, embedder embed.Embedder, tools []catalog.Tool, questions int) error {
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: env.log, SearchLogKeep: env.cfg.SearchLogKeep,
		SyncTimeout: env.cfg.SyncTimeout, Embedder: embedder, Enricher: newEnricher(env.cfg, env.providerObserver()), Questions: questions,
		MCPSessionKeep: env.cfg.MCPSessionKeep},
		jobs.Options{Work: true, MaxWorkers: 2 * runtime.NumCPU(), PollOnly: env.cfg.RiverPollOnly})
	if err != nil {
		return err
	}
	if err := rc.Start(ctx); err != nil {
		return fmt.Errorf("start workers: %w", err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = rc.StopAndCancel(sctx)
	}()
	if _, _, err := jobs.ImportCatalog(ctx, pool, rc, evalSource, tools); err != nil {
		return err
	}
	start, lastPrint := time.Now(), time.Time{}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		counts, err := enrichJobCounts(ctx, pool)
		if err != nil {
			return err
		}
		done, failed := counts["completed"], counts["discarded"]+counts["cancelled"]
		total := 0
		for _, n := range counts {
			total += n
		}
		if failed > 0 {
			var last string
			// Raw SQL: river_job belongs to River's own migrations, which sqlc does not read.
			_ = pool.QueryRow(ctx, `SELECT coalesce(errors[array_length(errors, 1)]->>'error', '')
				FROM river_job WHERE kind = 'enrich_tool' AND state IN ('discarded', 'cancelled') ORDER BY id LIMIT 1`).Scan(&last)
			return &EnrichFailedError{Failed: failed, First: last}
		}
		if done == total || time.Since(lastPrint) >= 5*time.Second {
			el := time.Since(start).Seconds()
			fmt.Fprintf(env.stderr, "eval: enrichment %d/%d jobs completed (%.0fs, %.0f tools/s)\n", done, total, el, float64(done)/max(el, 0.001))
			lastPrint = time.Now()
		}
		if done == total {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// enrichJobCounts counts the enrich_tool jobs by state.
func enrichJobCounts(ctx context.Context, pool *pgxpool.Pool) (map[string]int, error) {
	// Raw SQL: river_job belongs to River's own migrations, which sqlc does not read.
	rows, err := pool.Query(ctx, `SELECT state::text, count(*) FROM river_job WHERE kind = 'enrich_tool' GROUP BY state`)
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for rows.Next() {
		var state string
		var n int
		if err := rows.Scan(&state, &n); err != nil {
			return nil, err
		}
		counts[state] = n
	}
	return counts, rows.Err()
}

// printEvalRuns prints one report as the JSON object, several as {"runs": [...]},
// or, without asJSON, Markdown tables: overall, then one per kind.
func printEvalRuns(env *cliEnv, runs []evalRun, ks []int, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		if len(runs) == 1 {
			return enc.Encode(runs[0].report)
		}
		reports := make([]eval.Report, len(runs))
		for i, r := range runs {
			reports[i] = r.report
		}
		return enc.Encode(map[string]any{"runs": reports})
	}
	rows := make([]eval.Row, len(runs))
	for i, r := range runs {
		rows[i] = eval.Row{Label: r.label, Report: r.report}
	}
	fmt.Fprintf(env.stdout, "## All queries\n\n%s", eval.Table(rows, ks, ""))
	for _, kind := range runs[0].report.Kinds() {
		fmt.Fprintf(env.stdout, "\n## %s\n\n%s", kind, eval.Table(rows, ks, kind))
	}
	return nil
}
