package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/eval"
)

// runEvalCalls scores agent tool-call traces: FinMCP-Bench tool precision, recall, F1 and
// exact match rate, and the Toolshed weighted score.
func runEvalCalls(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlags("eval calls", env)
	goldPath := fs.String("gold", "", "gold traces (JSON lines)")
	predPath := fs.String("pred", "", "predicted traces (JSON lines)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *goldPath == "" || *predPath == "" || fs.NArg() > 0 {
		return &cli.UsageError{Msg: "usage: toolgate eval calls --gold FILE --pred FILE [--json]"}
	}
	gold, err := readTraces(*goldPath)
	if err != nil {
		return err
	}
	pred, err := readTraces(*predPath)
	if err != nil {
		return err
	}
	s, err := eval.ScoreCalls(gold, pred)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	}
	fmt.Fprintf(env.stdout, "samples          %d\n", s.NSamples)
	for _, row := range []struct {
		name  string
		value float64
	}{
		{"tool precision", s.ToolPrecision},
		{"tool recall", s.ToolRecall},
		{"tool F1", s.ToolF1},
		{"exact match rate", s.ExactMatchRate},
		{"names (50%)", s.NameScore},
		{"keys (25%)", s.KeyScore},
		{"values (25%)", s.ValueScore},
		{"weighted score", s.WeightedScore},
	} {
		fmt.Fprintf(env.stdout, "%-16s %.3f\n", row.name, row.value)
	}
	return nil
}

func readTraces(path string) ([]eval.Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	traces, err := eval.ParseTraces(f)
	var de *eval.DatasetError
	if errors.As(err, &de) {
		de.File = path
	}
	return traces, err
}
