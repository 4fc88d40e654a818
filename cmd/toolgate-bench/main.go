// Command toolgate-bench runs toolgate's benchmarks and prints each one's results as a
// Markdown section (docs/benchmarks.md). It is apart from toolgate, the served binary,
// which thus links neither the Bleve peer nor the plotting library; `toolgate bench
// SUBCOMMAND` runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/bench/benchdb"
	"github.com/toolgate/toolgate/internal/bench/httpop"
	"github.com/toolgate/toolgate/internal/bench/searchload"
	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/logging"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/search/searchbench"
	"github.com/toolgate/toolgate/internal/setup"
)

// command is one benchmark: it parses its own flags from args.
type command func(ctx context.Context, env *cliEnv, args []string) error

// cliEnv is what every benchmark gets: settings, a logger and the output streams.
type cliEnv struct {
	cfg    config.Config
	log    *slog.Logger
	stdout io.Writer
	stderr io.Writer
	// about is the running benchmark's line of benchCommands, which its --help prints.
	about string
}

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run runs the benchmark args name and returns the exit code: 0, 1 when it failed, 2 for
// a command line or settings mistake.
func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "toolgate bench: want a benchmark (%s) (see toolgate bench --help)\n", strings.Join(benchNames(), ", "))
		return 2
	}
	if isHelp(args[0]) || args[0] == "help" {
		writeUsage(stdout)
		return 0
	}
	b, ok := benchCommands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "toolgate bench: unknown benchmark %q (see toolgate bench --help)\n", args[0])
		return 2
	}
	cfg, err := config.Load(getenv)
	if err != nil && slices.ContainsFunc(args[1:], isHelp) {
		// Help needs no valid settings: the flags' defaults are then the built-in ones.
		cfg, err = config.Load(func(string) string { return "" })
	}
	if err != nil {
		fmt.Fprintf(stderr, "toolgate bench: %v\n", err)
		return 2
	}
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	var h slog.Handler = slog.NewJSONHandler(stderr, opts)
	if cfg.LogFormat == "text" {
		h = slog.NewTextHandler(stderr, opts)
	}
	env := &cliEnv{cfg: cfg, log: slog.New(logging.NewHandler(h)), stdout: stdout, stderr: stderr, about: b.help}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return cli.Exit(stderr, "toolgate bench "+args[0], b.run(ctx, env, args[1:]))
}

func isHelp(arg string) bool { return arg == "-h" || arg == "--help" || arg == "-help" }

func benchNames() []string {
	names := make([]string, 0, len(benchCommands))
	for name := range benchCommands {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// writeUsage lists the benchmarks.
func writeUsage(w io.Writer) {
	fmt.Fprint(w, "usage: toolgate bench SUBCOMMAND [flags]   (or toolgate-bench SUBCOMMAND [flags])\n\n"+
		"Run a benchmark and print its results as a Markdown section (docs/benchmarks.md).\n\n"+
		"subcommands (toolgate bench SUBCOMMAND --help for each):\n")
	for _, name := range benchNames() {
		fmt.Fprintf(w, "  %-10s %s\n", name, benchCommands[name].help)
	}
}

// newFlags makes a benchmark's flag set that reports errors instead of exiting; -h and
// --help print its help and flags to stdout.
func newFlags(name string, env *cliEnv) *flag.FlagSet {
	return cli.NewFlags("toolgate "+name, func(fs *flag.FlagSet) {
		fmt.Fprintf(env.stdout, "usage: toolgate %s [flags]\n\n%s (docs/benchmarks.md).\n\nflags:\n", name, env.about)
		fs.SetOutput(env.stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	})
}

// parseFlags parses a benchmark's flags (cli.Parse): benchmarks take no positional
// arguments.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// server is the PostgreSQL server of the settings, on which the benchmarks make their
// databases.
func (env *cliEnv) server() benchdb.Server {
	return benchdb.Server{URL: env.cfg.DatabaseURL, MaxConns: env.cfg.DBMaxConns, Log: env.log}
}

// catalog opens the searchbench catalog of n tools (benchdb.Server.Catalog).
func (env *cliEnv) catalog(reuse bool) searchload.Catalog {
	return func(ctx context.Context, n int) (*pgxpool.Pool, error) { return env.server().Catalog(ctx, n, reuse) }
}

// toolgate serves the real API on a catalog's pool (open mode, hybrid search of the
// settings with the searchbench embedder) on a loopback listener. Its log has warnings and
// errors only: an access-log line per request would measure the terminal.
func (env *cliEnv) toolgate(pool *pgxpool.Pool) (string, func(), error) {
	st, err := setup.SearchSettings(env.cfg, nil)
	if err != nil {
		return "", nil, err
	}
	log := slog.New(slog.NewJSONHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	svc := search.New(pool, searchbench.Embedder{}, st, log)
	return httpop.Serve(api.New(api.Deps{Pool: pool, Logger: log, Open: true, Search: svc}))
}
