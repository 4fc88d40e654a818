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

	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/logging"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/tracing"
)

const usage = `toolgate — tool-retrieval gateway for LLM agents

usage: toolgate <command> [flags]

commands:
  serve     run the HTTP API and the River workers
  demo      migrate, load the demo catalog and serve (open mode, for local use; --keys: with keys)
  migrate   up | down [N] | version
  import    FILE --source NAME: replace a catalog source's tools with FILE's
  sync      NAME: sync an MCP source from its server now
  sources   forget-queries NAME: remove the observed queries of the source's tools
            | reencrypt-secrets: seal the sources' OAuth tokens under the first TOOLGATE_SECRET_KEYS key
  keys      create --name N --scope admin|search [--sources a,b] [--rate 600] | list | revoke NAME|PREFIX
  profiles  list | show NAME | activate NAME | reweight NAME [--wait]: TDWA weight profiles
            | tune NEW [--baseline P] [--wait] | tunes: weights tuned from labelled searches
  experiments start NAME --candidate P [--control P] --share F [--unit session|key] | list | show NAME
            | stop NAME: A/B experiments between weight profiles (docs/experiments.md)
  eval      DIR [--mode all] [--profile all] [--vary k_rrf=30,60] [--out FILE]: retrieval quality on a
            dataset, in a fresh database
            | calls --gold FILE --pred FILE: score agent tool-call traces (docs/eval.md)
            | fit-confidence FILE...: refit the answer confidence on --per-query files
  dataset   scalemcp --companies N --out DIR: generate the ScaleMCP-style eval dataset
            | mcp --servers FILE --out DIR: list real MCP servers' tools into tools.jsonl
  bench     SUBCOMMAND: benchmarks, run by the program toolgate-bench (toolgate bench --help
            lists them; docs/benchmarks.md)
  plan      [--mode full] [--companies N | --vocabulary FILE] QUERY: print the heuristic query plan
  reembed   rebuild every vector with the configured embedder (after changing model or dims)
  mcp       serve the MCP gateway (find_tools) over stdio for a local host
  version   print the version, commit and date the binary was built from (also --version)

Every command and subcommand answers --help (toolgate keys create --help).

Settings come from environment variables (see README); flags override them.
`

// command is one subcommand: it parses its own flags from args.
type command func(ctx context.Context, env *cliEnv, args []string) error

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

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 || isHelp(args[0]) || args[0] == "help" {
		fmt.Fprint(stdout, usage)
		return 0
	}
	if args[0] == "--version" {
		args = append([]string{"version"}, args[1:]...)
	}
	path, c, rest := resolve(args)
	if c == nil {
		fmt.Fprintf(stderr, "toolgate: unknown command %q (see toolgate --help)\n", args[0])
		return 2
	}
	if c.run == nil {
		// A group of subcommands: its help needs no settings, and without a known
		// subcommand there is nothing to run.
		switch {
		case len(rest) > 0 && isHelp(rest[0]):
			writeHelp(stdout, path, nil)
			return 0
		case len(rest) == 0:
			fmt.Fprintf(stderr, "toolgate %s: want a subcommand (%s); usage: %s (see toolgate %s --help)\n", path, strings.Join(subNames(c), ", "), c.usage, path)
		default:
			fmt.Fprintf(stderr, "toolgate %s: unknown subcommand %q; usage: %s (see toolgate %s --help)\n", path, rest[0], c.usage, path)
		}
		return 2
	}
	cfg, err := config.Load(getenv)
	if err != nil && asksHelp(rest) {
		// Help needs no valid settings: the flags' defaults are then the built-in ones.
		cfg, err = config.Load(func(string) string { return "" })
	}
	if err != nil {
		fmt.Fprintf(stderr, "toolgate: %v\n", err)
		return 2
	}
	env := &cliEnv{cfg: cfg, log: newLogger(cfg, stderr), stdout: stdout, stderr: stderr}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err = c.run(ctx, env, rest)
	var xe *exitError
	if errors.As(err, &xe) {
		return xe.code
	}
	code := cli.Exit(stderr, "toolgate "+path, err)
	var ce *config.Error
	if errors.As(err, &ce) {
		return 2 // a setting the command reads itself
	}
	return code
}

// newLogger is the process's logger: text or JSON lines on w (TOOLGATE_LOG_FORMAT; auto is
// text when w is a terminal).
func newLogger(cfg config.Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "text" || cfg.LogFormat == config.LogFormatAuto && isTerminal(w) {
		return slog.New(logging.NewHandler(slog.NewTextHandler(w, opts)))
	}
	return slog.New(logging.NewHandler(slog.NewJSONHandler(w, opts)))
}

// newFlags makes a subcommand's flag set that reports errors instead of exiting. name is
// the command's path in the command table ("keys create"): -h and --help print its help
// and flags to stdout.
func newFlags(name string, env *cliEnv) *flag.FlagSet {
	return cli.NewFlags("toolgate "+name, func(fs *flag.FlagSet) { writeHelp(env.stdout, name, fs) })
}

// parseArgs parses the arguments of a subcommand that has no flags, so that it answers
// --help like the others, and returns its positional arguments.
func parseArgs(name string, env *cliEnv, args []string) ([]string, error) {
	fs := newFlags(name, env)
	if err := cli.Parse(fs, args); err != nil {
		return nil, err
	}
	return fs.Args(), nil
}

// leadingArg splits off a positional argument given before the flags (`import FILE
// --source x`), which the flag package would otherwise stop at.
func leadingArg(args []string) (string, []string) {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return args[0], args[1:]
	}
	return "", args
}

// isTerminal reports whether w is a character device: a terminal, not a file or a pipe.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// asksHelp reports whether args ask for a command's help (-h or --help before any "--").
func asksHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if isHelp(a) {
			return true
		}
	}
	return false
}
