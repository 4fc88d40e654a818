package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/eval"
)

const datasetUsage = "usage: toolgate dataset scalemcp --companies N [--seed S] --out DIR\n" +
	"       toolgate dataset mcp --servers FILE --out DIR [--timeout 60s] [--parallel 4] [--skip-failed]"

// runDatasetScaleMCP writes the generated ScaleMCP-style dataset.
func runDatasetScaleMCP(_ context.Context, env *cliEnv, rest []string) error {
	d := dataset.DefaultQueryOptions
	fs := newFlags("dataset scalemcp", env)
	companies := fs.Int("companies", 1000, fmt.Sprintf("number of companies, 1 to %d (5 tools each)", dataset.MaxCompanies()))
	seed := fs.Uint64("seed", d.Seed, "random seed; the same seed gives the same dataset")
	out := fs.String("out", "", "output directory (tools.jsonl, queries.jsonl)")
	single := fs.Int("single", d.Single, "single-tool queries")
	multiTool := fs.Int("multi-tool", d.MultiTool, "multi-tool queries (one company)")
	multiCompany := fs.Int("multi-company", d.MultiCompany, "multi-company queries (one function)")
	multiHop := fs.Int("multi-hop", d.MultiHop, "multi-hop queries (several functions and companies)")
	if err := cli.Parse(fs, rest); err != nil {
		return err
	}
	if *out == "" || fs.NArg() > 0 {
		return &cli.UsageError{Msg: datasetUsage}
	}
	if *single < 0 || *multiTool < 0 || *multiCompany < 0 || *multiHop < 0 {
		return &cli.UsageError{Msg: "query counts must not be negative"}
	}
	if *companies < 1 || *companies > dataset.MaxCompanies() {
		return &cli.UsageError{Msg: fmt.Sprintf("--companies must be 1 to %d", dataset.MaxCompanies())}
	}
	ds, err := dataset.Build(*companies, dataset.QueryOptions{Seed: *seed, Single: *single, MultiTool: *multiTool, MultiCompany: *multiCompany, MultiHop: *multiHop})
	if err != nil {
		return err
	}
	if err := eval.Write(*out, ds); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "wrote %d tools and %d queries to %s\n", len(ds.Tools), len(ds.Queries), *out)
	return nil
}

// runDatasetMCP lists the tools of real MCP servers into a dataset's tools.jsonl: each
// server of the servers file is started over stdio with toolgate's MCP client, its tools
// named under the server's name as a sync would name them. The queries are written by hand,
// so queries.jsonl is never written; when DIR has one, the new catalog must still satisfy
// it (every gold name listed), or the command fails after writing tools.jsonl.
func runDatasetMCP(ctx context.Context, env *cliEnv, rest []string) error {
	fs := newFlags("dataset mcp", env)
	serversFile := fs.String("servers", "", "JSON array of servers: name, package, command, args, env")
	out := fs.String("out", "", "output directory (tools.jsonl)")
	timeout := fs.Duration("timeout", 60*time.Second, "time to start one server and list its tools")
	parallel := fs.Int("parallel", 4, "servers listed at the same time")
	skipFailed := fs.Bool("skip-failed", false, "write the tools of the servers that listed even if some failed")
	if err := cli.Parse(fs, rest); err != nil {
		return err
	}
	if *serversFile == "" || *out == "" || fs.NArg() > 0 {
		return &cli.UsageError{Msg: datasetUsage}
	}
	if *timeout <= 0 || *parallel < 1 {
		return &cli.UsageError{Msg: "--timeout and --parallel must be positive"}
	}
	servers, err := dataset.ReadServers(*serversFile)
	if err != nil {
		return err
	}
	listings := dataset.ListServers(ctx, servers, *timeout, *parallel)
	var failed []error
	for _, l := range listings {
		if l.Err != nil {
			failed = append(failed, l.Err)
			fmt.Fprintf(env.stdout, "%-20s FAILED  %v\n", l.Server.Name, l.Err)
			continue
		}
		fmt.Fprintf(env.stdout, "%-20s %4d tools  %s\n", l.Server.Name, len(l.Tools), l.Server.Package)
		for _, p := range l.Skipped {
			fmt.Fprintf(env.stdout, "%-20s skipped %s: %s\n", "", p.Name, p.Reason)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(failed) > 0 && !*skipFailed {
		return fmt.Errorf("%d of %d servers failed, nothing written (--skip-failed writes the others): %w", len(failed), len(servers), errors.Join(failed...))
	}
	tools := dataset.MergeListings(listings)
	if len(tools) == 0 {
		return errors.New("no server listed any tool, nothing written")
	}
	if err := eval.WriteTools(*out, tools); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "wrote %d tools of %d servers to %s\n", len(tools), len(servers)-len(failed), filepath.Join(*out, eval.ToolsFile))
	if _, err := os.Stat(filepath.Join(*out, eval.QueriesFile)); err == nil {
		if _, err := eval.Load(*out); err != nil {
			return fmt.Errorf("the new tools no longer fit the queries (fix queries.jsonl or the servers): %w", err)
		}
	}
	return nil
}
