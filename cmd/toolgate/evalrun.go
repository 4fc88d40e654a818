package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/eval"
	"github.com/toolgate/toolgate/internal/evalrun"
	"github.com/toolgate/toolgate/internal/plan"
	"github.com/toolgate/toolgate/internal/search"
)

const evalUsage = "usage: toolgate eval DIR [--k 1,5,10] [--mode hybrid|lexical|vector|all] [--profile NAME[,NAME]|all] " +
	"[--plan default|none|rewrite|decompose|full[,...]] [--set key=value]... [--vary key=v1,v2,...]... [--questions N] [--queries-limit N] " +
	"[--kind KIND[,KIND]] [--traffic-split kind:NAME|FRACTION [--curve-svg FILE]] [--out FILE] [--per-query FILE] [--json] [--keep]\n       toolgate eval calls --gold FILE --pred FILE [--json]\n       toolgate eval fit-confidence [--measure FILE[:odd|:even]]... [--l2 1] [--json] FILE[:odd|:even]..."

// runEvalDataset is `toolgate eval DIR`: the run itself is evalrun.Run, which reports its
// progress on stderr; the reports go to stdout, as tables or JSON. An interrupted run prints
// the tables of the configurations it finished.
func runEvalDataset(ctx context.Context, env *cliEnv, args []string) error {
	o, asJSON, err := parseEvalRunFlags(env, args)
	if err != nil {
		return err
	}
	renv := evalrun.Env{Config: env.cfg, Log: env.log, Observer: env.providerObserver(), Progress: env.stderr}
	if o.Traffic != nil {
		curves, err := evalrun.RunCurves(ctx, renv, o)
		if err != nil {
			return usageOf(err)
		}
		if o.CurveSVG != "" {
			if err := evalrun.WriteCurveSVG(o.CurveSVG, curves, o.Ks); err != nil {
				return err
			}
		}
		return printCurves(env, curves, o.Ks, asJSON)
	}
	runs, err := evalrun.Run(ctx, renv, o)
	if err != nil {
		if ctx.Err() != nil && len(runs) > 0 && !asJSON {
			_ = printEvalRuns(env, runs, o.Ks, false)
		}
		return usageOf(err)
	}
	return printEvalRuns(env, runs, o.Ks, asJSON)
}

// usageOf is err as a cli.UsageError when it is an option the caller got wrong.
func usageOf(err error) error {
	var oe *evalrun.OptionError
	if errors.As(err, &oe) {
		return &cli.UsageError{Msg: oe.Msg}
	}
	return err
}

func parseEvalRunFlags(env *cliEnv, args []string) (evalrun.Options, bool, error) {
	o := evalrun.Options{Args: append([]string{}, args...)}
	dir, rest := leadingArg(args)
	fs := newFlags("eval", env)
	k := fs.String("k", "1,5,10", "cut-offs K, comma-separated")
	mode := fs.String("mode", "hybrid", "hybrid, lexical, vector or all")
	profile := fs.String("profile", "", "weight profiles of the vector branch, comma-separated, or all (default: the active one)")
	questions := fs.Int("questions", env.cfg.Questions, "synthetic questions per tool (TOOLGATE_QUESTIONS)")
	plans := fs.String("plan", "default", "query planning: default (what POST /search does when a request names no plan: TOOLGATE_SEARCH_PLAN), none, rewrite, decompose or full, comma-separated to compare")
	var sets, varies stringList
	fs.Var(&sets, "set", "search setting key=value for every configuration (repeatable; keys: "+strings.Join(evalrun.SettingNames(), ", ")+")")
	fs.Var(&varies, "vary", "search setting key=v1,v2,...: one configuration per value, the product over several --vary (repeatable)")
	limit := fs.Int("queries-limit", 0, "run only N queries, evenly spaced over the file (0: all)")
	outFile := fs.String("out", "", "append each configuration's report to FILE as one JSON line when it finishes")
	curveSVG := fs.String("curve-svg", "", "with --traffic-split: write the learning curves as an SVG line chart (Recall@5 per caller against the traffic replayed) to FILE")
	perQuery := fs.String("per-query", "", "write each query's ranked results and the rank of each gold tool to FILE, one JSON line per query and configuration")
	asJSON := fs.Bool("json", false, "print one JSON object")
	keep := fs.Bool("keep", false, "keep the evaluation database (its name is printed)")
	kinds := fs.String("kind", "", "only the queries of these kinds, comma-separated (default: all)")
	traffic := fs.String("traffic-split", "", "a learning curve: replay the queries of kind:NAME, or this fraction of them (evenly spaced), as traffic with feedback, and measure the others after 0, 25, 50 and 100% of it")
	if err := cli.Parse(fs, rest); err != nil {
		return o, false, err
	}
	if dir == "" && fs.NArg() == 1 {
		dir = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return o, false, &cli.UsageError{Msg: evalUsage}
	}
	if dir == "" {
		return o, false, &cli.UsageError{Msg: evalUsage}
	}
	ks, err := eval.ParseKs(*k)
	if err != nil {
		return o, false, &cli.UsageError{Msg: "--k: " + err.Error()}
	}
	if ks[len(ks)-1] > search.MaxK {
		return o, false, &cli.UsageError{Msg: fmt.Sprintf("--k: at most %d", search.MaxK)}
	}
	switch m := search.Mode(*mode); m {
	case search.ModeHybrid, search.ModeLexical, search.ModeVector:
		o.Modes = []search.Mode{m}
	case "all":
		o.Modes = []search.Mode{search.ModeLexical, search.ModeVector, search.ModeHybrid}
	default:
		return o, false, &cli.UsageError{Msg: fmt.Sprintf("--mode: %q is not hybrid, lexical, vector or all", *mode)}
	}
	if *profile == "all" {
		o.AllProfiles = true
	} else {
		o.Profiles = strings.Split(*profile, ",")
	}
	for p := range strings.SplitSeq(*plans, ",") {
		if strings.TrimSpace(p) == "default" {
			o.Plans = append(o.Plans, evalrun.PlanDefault)
			continue
		}
		pm, err := plan.ParseMode(strings.TrimSpace(p))
		if err != nil {
			return o, false, &cli.UsageError{Msg: "--plan: " + err.Error()}
		}
		o.Plans = append(o.Plans, pm)
	}
	if o.Set, o.Variations, err = evalrun.ParseSettings(sets, varies); err != nil {
		return o, false, usageOf(err)
	}
	if *questions < 0 || *questions > 50 {
		return o, false, &cli.UsageError{Msg: "--questions must be 0 to 50"}
	}
	if *limit < 0 {
		return o, false, &cli.UsageError{Msg: "--queries-limit must not be negative"}
	}
	if *perQuery != "" && *perQuery == *outFile {
		return o, false, &cli.UsageError{Msg: "--per-query and --out must be different files"}
	}
	if *kinds != "" {
		o.Kinds = strings.Split(*kinds, ",")
	}
	if *traffic != "" {
		if o.Traffic, err = evalrun.ParseTrafficSplit(*traffic); err != nil {
			return o, false, usageOf(err)
		}
	}
	if *curveSVG != "" && *traffic == "" {
		return o, false, &cli.UsageError{Msg: "--curve-svg draws a learning curve: it needs --traffic-split"}
	}
	o.CurveSVG = *curveSVG
	o.Dir, o.Ks, o.Questions, o.QueriesLimit, o.Out, o.PerQuery, o.Keep = dir, ks, *questions, *limit, *outFile, *perQuery, *keep
	return o, *asJSON, nil
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, " ") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

// printEvalRuns prints one configuration's line as a JSON object, several as
// {"runs": [...]}, or, without asJSON, Markdown tables: overall, then one per kind.
func printEvalRuns(env *cliEnv, runs []evalrun.Line, ks []int, asJSON bool) error {
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
	if t := eval.CalibrationTable(rows); t != "" {
		fmt.Fprintf(env.stdout, "\n## Calibration (share of searches whose first result is right, per answer confidence)\n\n%s", t)
	}
	return nil
}

// printCurves prints learning curves as JSON ({"curves": [...]}) or Markdown tables.
func printCurves(env *cliEnv, curves []evalrun.Curve, ks []int, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(map[string]any{"curves": curves})
	}
	_, err := fmt.Fprint(env.stdout, evalrun.CurveTables(curves, ks))
	return err
}
