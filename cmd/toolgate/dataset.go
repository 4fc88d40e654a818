package main

import (
	"context"
	"fmt"

	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/eval"
)

const datasetUsage = "usage: toolgate dataset scalemcp --companies N [--seed S] --out DIR"

// runDataset writes a generated evaluation dataset (docs/eval.md).
func runDataset(_ context.Context, env *cliEnv, args []string) error {
	name, rest := leadingArg(args)
	if name != "scalemcp" {
		return &usageError{msg: datasetUsage}
	}
	d := dataset.DefaultQueryOptions
	fs := newFlags("dataset scalemcp", env)
	companies := fs.Int("companies", 1000, fmt.Sprintf("number of companies, 1 to %d (5 tools each)", dataset.MaxCompanies()))
	seed := fs.Uint64("seed", d.Seed, "random seed; the same seed gives the same dataset")
	out := fs.String("out", "", "output directory (tools.jsonl, queries.jsonl)")
	single := fs.Int("single", d.Single, "single-tool queries")
	multiTool := fs.Int("multi-tool", d.MultiTool, "multi-tool queries (one company)")
	multiCompany := fs.Int("multi-company", d.MultiCompany, "multi-company queries (one function)")
	multiHop := fs.Int("multi-hop", d.MultiHop, "multi-hop queries (several functions and companies)")
	if err := parseFlags(fs, rest); err != nil {
		return err
	}
	if *out == "" || fs.NArg() > 0 {
		return &usageError{msg: datasetUsage}
	}
	if *single < 0 || *multiTool < 0 || *multiCompany < 0 || *multiHop < 0 {
		return &usageError{msg: "query counts must not be negative"}
	}
	if *companies < 1 || *companies > dataset.MaxCompanies() {
		return &usageError{msg: fmt.Sprintf("--companies must be 1 to %d", dataset.MaxCompanies())}
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
