package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/postgres"
)

// cliCommand is one entry of the command table: what runs the command and what its
// --help says. run dispatches on the table, so a command and its help cannot drift apart.
type cliCommand struct {
	// run parses the command's flags and runs it; nil for a group that only has subs.
	run command
	// usage is the usage line(s), each starting with "toolgate".
	usage string
	// about is the one-paragraph description --help prints under the usage.
	about string
	// subs are the subcommands, chosen by the first argument; any other first argument
	// goes to run (eval DIR beside eval calls).
	subs map[string]*cliCommand
}

// commands is the command table. It is filled in init because the commands' flag sets
// look their help up in it, which a variable initializer could not refer to.
var commands map[string]*cliCommand

func init() {
	commands = map[string]*cliCommand{
		"serve": {run: runServe, usage: "toolgate serve [--listen ADDR] [--role all|api|worker] [--no-migrate] [--open]",
			about: "Run the HTTP API (REST and MCP over /mcp) and the River workers that sync sources, enrich and embed tools. It applies the migrations at start unless told not to; settings come from the environment (README), the flags override them."},
		"demo": {run: runDemo, usage: "toolgate demo [--listen ADDR] [--companies N] [--keys]",
			about: "Migrate, load (or refresh) the bundled ScaleMCP-style demo catalog as the source \"demo\" and serve it in open mode, for local use: no API key is needed and every caller is admin. With --keys it serves with API keys instead: it makes an admin key (demo-admin) and a search key that sees the source demo only (demo-search), revoking those of a previous run, and prints them on stdout as ADMIN_KEY=... and SEARCH_KEY=... before it serves. Enrichment and embedding run in the background; lexical search works at once."},
		"migrate": {usage: "toolgate migrate up | down [N] | version",
			about: "Manage the database schema: apply the migrations, roll back N of them, or print the schema version. Each prints the resulting version.",
			subs: map[string]*cliCommand{
				"up": {run: runMigrateUp, usage: "toolgate migrate up",
					about: "Apply every pending migration and the River tables, then index what they queued for the lexical index, so that the catalog is searchable when the command returns."},
				"down": {run: runMigrateDown, usage: "toolgate migrate down [N]",
					about: "Roll back the last N migrations (default: every one). The data of the dropped tables is lost."},
				"version": {run: runMigrateVersion, usage: "toolgate migrate version",
					about: "Print the schema version, whether it is dirty, the latest version this binary knows and whether the River tables are current."},
			}},
		"import": {run: runImport, usage: "toolgate import FILE --source NAME",
			about: "Replace the tools of a catalog source with those of FILE, creating the source when missing. FILE holds JSON lines, a JSON array of the same entries, or an MCP tools/list answer ({\"tools\":[...]}); each entry is in toolgate's (and Anthropic's) format {\"name\",\"description\",\"input_schema\"}, OpenAI's function format ({\"type\":\"function\",\"function\":{\"name\",\"description\",\"parameters\"}}, or the same without the wrapper) or MCP's {\"name\",\"description\",\"inputSchema\"}. Unchanged tools keep their enrichment and vectors; the rest are queued for enrichment."},
		"sync": {run: runSync, usage: "toolgate sync NAME [--timeout 1m]",
			about: "Sync an MCP source from its server now, in this process, through the same code as the background job, and print what changed."},
		"sources": {usage: "toolgate sources forget-queries NAME | reencrypt-secrets",
			about: "Manage catalog sources from the command line.",
			subs: map[string]*cliCommand{
				"forget-queries": {run: withPool("sources forget-queries", 1, sourcesForgetQueries), usage: "toolgate sources forget-queries NAME",
					about: "Remove the observed queries of the source's tools (the searches that led agents to them), as DELETE /v1/sources/{name}/observed-queries does."},
				"reencrypt-secrets": {run: withPool("sources reencrypt-secrets", 0, sourcesReencrypt), usage: "toolgate sources reencrypt-secrets",
					about: "Seal again under the first key of TOOLGATE_SECRET_KEYS every OAuth token and client secret of the sources sealed under another key, after which the other keys may leave the list (docs/upstream-oauth.md#key-rotation)."},
			}},
		"keys": {usage: "toolgate keys create --name N --scope admin|search [flags] | list | revoke NAME|PREFIX",
			about: "Manage API keys (docs/auth.md): a search key may search and use tools of its sources, an admin key may also change the catalog and the settings.",
			subs: map[string]*cliCommand{
				"create": {run: keysCreate, usage: "toolgate keys create --name NAME --scope admin|search [--sources a,b] [--rate N] [--plan MODE]",
					about: "Create an API key and print it. The key is shown only this once: only its hash is stored."},
				"list": {run: withPool("keys list", 0, keysList), usage: "toolgate keys list",
					about: "List the API keys, active and revoked, with their scope, sources, rate limit, query plan and last use."},
				"revoke": {run: withPool("keys revoke", 1, keysRevoke), usage: "toolgate keys revoke NAME|PREFIX",
					about: "Revoke the active key of that name or prefix; requests with it are refused from then on."},
			}},
		"profiles": {usage: "toolgate profiles list | show NAME | activate NAME | reweight NAME [--wait] | tune NEW [flags] | tunes",
			about: "Administer the TDWA weight profiles of the vector branch: list and inspect them, activate one, rebuild a profile's vectors, and tune new weights from the labelled searches.",
			subs: map[string]*cliCommand{
				"list": {run: withPool("profiles list", 0, profilesList), usage: "toolgate profiles list",
					about: "List the weight profiles with their strategy, current and building vector sets and weights; the active one is starred."},
				"show": {run: withPool("profiles show", 1, profilesShow), usage: "toolgate profiles show NAME",
					about: "Print a weight profile as JSON, as GET /admin/profiles/{name} answers."},
				"activate": {run: withPool("profiles activate", 1, profilesActivate), usage: "toolgate profiles activate NAME",
					about: "Make the profile the one searches use. Its vectors must be built."},
				"reweight": {run: profilesReweight, usage: "toolgate profiles reweight NAME [--wait] [--batch N]",
					about: "Rebuild the profile's vectors with its weights: queue the re-weight job, or with --wait run it in this process and print its progress."},
				"tune": {run: profilesTune, usage: "toolgate profiles tune NEW [--baseline P] [--since-days N] [--holdout F] [--min-searches N] [--max-searches N] [--max-per-key N] [--seed N] [--wait]",
					about: "Tune TDWA weights from the labelled searches into a new, inactive profile NEW, compared with a baseline on held-out searches: queue the tune job, or with --wait run it here and print its result."},
				"tunes": {run: withPool("profiles tunes", 0, profilesTunes), usage: "toolgate profiles tunes",
					about: "List the recent tunes with their state, held-out gain and verdict."},
			}},
		"experiments": {usage: "toolgate experiments start NAME --candidate P [--control P] --share F [--unit session|key] | list | show NAME [--max-per-key N] | stop NAME",
			about: "Administer A/B experiments between weight profiles (docs/experiments.md): a share of the sessions or keys searches with the candidate profile, the rest with the control.",
			subs: map[string]*cliCommand{
				"start": {run: experimentsStart, usage: "toolgate experiments start NAME --candidate P [--control P] --share F [--unit session|key]",
					about: "Start an experiment routing --share of the units (sessions or keys) to the candidate profile and the rest to the control."},
				"list": {run: withPool("experiments list", 0, experimentsList), usage: "toolgate experiments list",
					about: "List the experiments, running and stopped."},
				"show": {run: experimentsShow, usage: "toolgate experiments show NAME [--max-per-key N]",
					about: "Print the experiment and the comparison of its arms as JSON, a search key counting for at most --max-per-key searches per arm (200), as GET /admin/experiments/{name} answers."},
				"stop": {run: withPool("experiments stop", 1, experimentsStop), usage: "toolgate experiments stop NAME",
					about: "Stop the experiment: every search uses the active profile again. Its results stay."},
			}},
		"eval": {run: runEvalDataset, usage: evalUsage[len("usage: "):],
			about: "Measure retrieval quality on a dataset (tools.jsonl and queries.jsonl in DIR) in a fresh database: recall, nDCG, MAP and completeness at each K, for each configuration asked for (docs/eval.md). The run creates a database toolgate_eval_<hex> on the server of DATABASE_URL (its user needs CREATEDB; the database DATABASE_URL names is never read or written) and drops it at the end, also on error or Ctrl-C, unless --keep.",
			subs: map[string]*cliCommand{
				"calls": {run: runEvalCalls, usage: "toolgate eval calls --gold FILE --pred FILE [--json]",
					about: "Score agent tool-call traces against gold traces: tool precision, recall, F1 and exact match rate, and the weighted score of names, keys and values."},
				"fit-confidence": {run: runEvalFitConfidence, usage: fitConfidenceUsage[len("usage: "):],
					about: "Fit the answer confidence's logistic models (internal/search/confidence.go) on the --per-query files of eval runs and print them as Go, with the calibration of the served and the refitted confidence on every file, --measure files included (docs/eval.md#calibration)."},
			}},
		"dataset": {usage: datasetUsage[len("usage: "):],
			about: "Write an evaluation dataset (docs/eval.md): a generated ScaleMCP-style one, or the tools of real MCP servers.",
			subs: map[string]*cliCommand{
				"scalemcp": {run: runDatasetScaleMCP, usage: "toolgate dataset scalemcp --companies N [--seed S] --out DIR",
					about: "Generate the ScaleMCP-style dataset: five tools per company and single-tool, multi-tool, multi-company and multi-hop queries. The same seed gives the same dataset."},
				"mcp": {run: runDatasetMCP, usage: "toolgate dataset mcp --servers FILE --out DIR [--timeout 60s] [--parallel 4] [--skip-failed]",
					about: "Start each server of the servers file over stdio, list its tools and write them into DIR/tools.jsonl, named as a sync would name them. An existing queries.jsonl must still fit the new tools."},
			}},
		"bench": {run: runBench, usage: "toolgate bench SUBCOMMAND [flags]",
			about: "Run a benchmark and print its results as a Markdown section (docs/benchmarks.md). The benchmarks are the program toolgate-bench (cmd/toolgate-bench, built beside toolgate by make build), which this command runs; toolgate bench --help lists them."},
		"plan": {run: runPlan, usage: planUsage[len("usage: "):],
			about: "Print the heuristic planner's plan of QUERY as JSON: the rewritten query and the sub-queries it splits into (docs/planning.md)."},
		"reembed": {run: runReembed, usage: "toolgate reembed [--embedder local|openai] [--model M] [--dims N]",
			about: "Make the configured embedder the stored embedding space after changing the model or the dimensions: every vector is dropped and rebuilt by jobs that the workers of serve run."},
		"mcp": {run: runMCP, usage: "toolgate mcp",
			about: "Serve the MCP gateway (find_tools and, when enabled, call_tool and use_tool) over stdio for a local host such as Claude Desktop: one session, allowed every source. Logs go to stderr; stdout carries the protocol."},
		"version": {run: runVersion, usage: "toolgate version",
			about: "Print the version of the binary, the commit it was built from and its date on one line: toolgate 0.9.0 (commit 4897f80c1a2b, 2026-11-26T19:43:13Z). make build, make run and the Dockerfile stamp them (scripts/ldflags.sh); another build reports what Go recorded (module version, vcs.revision, vcs.time) or \"devel\". The MCP gateway reports the version as its serverInfo.version."},
	}
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool { return arg == "-h" || arg == "--help" || arg == "-help" }

// resolve finds the command that args name, following subcommands; it returns the
// command's path ("keys create"), the command (nil when unknown) and its arguments.
func resolve(args []string) (string, *cliCommand, []string) {
	c, ok := commands[args[0]]
	if !ok {
		return args[0], nil, nil
	}
	path, rest := args[0], args[1:]
	for len(rest) > 0 {
		sub, ok := c.subs[rest[0]]
		if !ok {
			break
		}
		path, c, rest = path+" "+rest[0], sub, rest[1:]
	}
	return path, c, rest
}

// lookup returns the command at path, nil when there is none.
func lookup(path string) *cliCommand {
	names := strings.Fields(path)
	if len(names) == 0 {
		return nil
	}
	_, c, rest := resolve(names)
	if len(rest) > 0 {
		return nil
	}
	return c
}

func subNames(c *cliCommand) []string {
	names := make([]string, 0, len(c.subs))
	for name := range c.subs {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// writeHelp prints the help of the command at path: its usage, description, subcommands
// and, given its flag set, flags.
func writeHelp(w io.Writer, path string, fs *flag.FlagSet) {
	c := lookup(path)
	if c == nil {
		// Every flag set is named after a command of the table (a test checks it).
		fmt.Fprintf(w, "usage: toolgate %s [flags]\n", path)
	} else {
		for i, line := range strings.Split(c.usage, "\n") {
			line = strings.TrimSpace(line)
			if i == 0 {
				fmt.Fprintf(w, "usage: %s\n", line)
			} else {
				fmt.Fprintf(w, "       %s\n", line)
			}
		}
		fmt.Fprintf(w, "\n%s\n", c.about)
		if len(c.subs) > 0 {
			fmt.Fprint(w, "\nsubcommands (toolgate "+path+" SUBCOMMAND --help for each):\n")
			for _, name := range subNames(c) {
				fmt.Fprintf(w, "  %-15s %s\n", name, firstSentence(c.subs[name].about))
			}
		}
	}
	if fs != nil {
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprint(w, "\nflags:\n")
			out := fs.Output()
			fs.SetOutput(w)
			fs.PrintDefaults()
			fs.SetOutput(out)
		}
	}
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// openReady connects to the database and checks that the schema is migrated, for the
// commands that administer what is stored.
func openReady(ctx context.Context, env *cliEnv) (*pgxpool.Pool, error) {
	pool, err := postgres.Connect(ctx, env.cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	if err := postgres.Ready(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("%w (run `toolgate migrate up` first)", err)
	}
	return pool, nil
}

// withPool adapts a subcommand without flags that takes nargs positional arguments: it
// answers --help and checks the arguments before it connects to the database.
func withPool(name string, nargs int, run func(context.Context, *cliEnv, *pgxpool.Pool, []string) error) command {
	return func(ctx context.Context, env *cliEnv, args []string) error {
		args, err := parseArgs(name, env, args)
		if err != nil {
			return err
		}
		if len(args) != nargs {
			return &cli.UsageError{Msg: "want " + lookup(name).usage}
		}
		pool, err := openReady(ctx, env)
		if err != nil {
			return err
		}
		defer pool.Close()
		return run(ctx, env, pool, args)
	}
}
