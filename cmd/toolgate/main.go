// Command toolgate is the tool-retrieval gateway: one binary whose subcommands serve the
// API and workers, manage the schema and the catalog, and evaluate and benchmark retrieval.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/logging"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/tracing"
)

const usage = `toolgate — tool-retrieval gateway for LLM agents

usage: toolgate <command> [flags]

commands:
  serve     run the HTTP API and the River workers
  demo      migrate, load the demo catalog and serve (open mode, for local use)
  migrate   up | down [N] | version
  import    FILE --source NAME: replace a catalog source's tools with FILE's
  sync      NAME: sync an MCP source from its server now
  sources   forget-queries NAME: remove the observed queries of the source's tools
  keys      create --name N --scope admin|search [--sources a,b] [--rate 600] | list | revoke NAME|PREFIX
  profiles  list | show NAME | activate NAME | reweight NAME [--wait]: TDWA weight profiles
            | tune NEW [--baseline P] [--wait] | tunes: weights tuned from labelled searches
  experiments start NAME --candidate P [--control P] --share F [--unit session|key] | list | show NAME
            | stop NAME: A/B experiments between weight profiles (docs/experiments.md)
  eval      DIR [--mode all] [--profile all] [--vary k_rrf=30,60] [--out FILE]: retrieval quality on a
            dataset, in a fresh database
            | calls --gold FILE --pred FILE: score agent tool-call traces (docs/eval.md)
  dataset   scalemcp --companies N --out DIR: generate the ScaleMCP-style eval dataset
            | mcp --servers FILE --out DIR: list real MCP servers' tools into tools.jsonl
  bench     SUBCOMMAND: benchmarks (toolgate bench --help lists them; docs/benchmarks.md)
  plan      [--mode full] [--companies N | --vocabulary FILE] QUERY: print the heuristic query plan
  reembed   rebuild every vector with the configured embedder (after changing model or dims)
  mcp       serve the MCP gateway (find_tools) over stdio for a local host

Settings come from environment variables (see README); flags override them.
`

// command is one subcommand: it parses its own flags from args.
type command func(ctx context.Context, env *cliEnv, args []string) error

var commands = map[string]command{
	"serve":       runServe,
	"demo":        runDemo,
	"migrate":     runMigrate,
	"import":      runImport,
	"sync":        runSync,
	"sources":     runSources,
	"keys":        runKeys,
	"profiles":    runProfiles,
	"experiments": runExperiments,
	"eval":        runEval,
	"dataset":     runDataset,
	"bench":       runBench,
	"reembed":     runReembed,
	"mcp":         runMCP,
	"plan":        runPlan,
}

// cliEnv is what every subcommand gets: settings, a logger and the output streams.
type cliEnv struct {
	cfg    config.Config
	log    *slog.Logger
	stdout io.Writer
	stderr io.Writer
	// tracing is set by commands that trace (serve, mcp); nil means off.
	tracing *tracing.Provider
	// metrics is set by serve, which exposes them; nil means none.
	metrics *metrics.Metrics
}

// usageError is a command line mistake; it is printed with a pointer to --help.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, usage)
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "toolgate: unknown command %q (see toolgate --help)\n", args[0])
		return 2
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "toolgate: %v\n", err)
		return 2
	}
	env := &cliEnv{cfg: cfg, log: newLogger(cfg, stderr), stdout: stdout, stderr: stderr}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := cmd(ctx, env, args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "toolgate %s: %v\n", args[0], err)
		var ue *usageError
		var ce *config.Error
		if errors.As(err, &ue) || errors.As(err, &ce) {
			return 2
		}
		return 1
	}
	return 0
}

func newLogger(cfg config.Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "text" {
		return slog.New(logging.NewHandler(slog.NewTextHandler(w, opts)))
	}
	return slog.New(logging.NewHandler(slog.NewJSONHandler(w, opts)))
}

// newFlags makes a subcommand's flag set that reports errors instead of exiting.
func newFlags(name string, env *cliEnv) *flag.FlagSet {
	fs := flag.NewFlagSet("toolgate "+name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	return fs
}

// parseFlags parses args and turns a flag mistake into a usageError.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &usageError{msg: err.Error()}
	}
	return nil
}

// leadingArg splits off a positional argument given before the flags (`import FILE
// --source x`), which the flag package would otherwise stop at.
func leadingArg(args []string) (string, []string) {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return args[0], args[1:]
	}
	return "", args
}
