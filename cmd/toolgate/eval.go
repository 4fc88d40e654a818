package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/eval"
	"github.com/toolgate/toolgate/internal/search"
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

// runEvalFitConfidence fits the answer confidence's models on --per-query files and
// measures them on others (eval.FitConfidence, eval.MeasureConfidence).
func runEvalFitConfidence(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlags("eval fit-confidence", env)
	var measure stringList
	fs.Var(&measure, "measure", "a --per-query file (FILE, FILE:odd or FILE:even) to measure the models on and not fit them on (repeatable)")
	l2 := fs.Float64("l2", 1, "L2 penalty of the coefficients (the intercept's excepted)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 || *l2 < 0 || slices.ContainsFunc(fs.Args(), func(a string) bool { return strings.HasPrefix(a, "-") }) {
		return &cli.UsageError{Msg: fitConfidenceUsage} // flags go before the files
	}
	var sets []eval.ConfidenceSet
	var fit []eval.QueryOutcome
	for i, spec := range append(fs.Args(), measure...) {
		set, err := eval.LoadConfidenceSet(spec, i < fs.NArg())
		if err != nil {
			return err
		}
		if set.Fitted {
			fit = append(fit, set.Outcomes...)
		}
		sets = append(sets, set)
	}
	models, err := eval.FitConfidence(fit, *l2)
	if err != nil {
		return err
	}
	rows := eval.MeasureConfidence(sets, models, search.ConfidenceThreshold)
	if *asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Models map[string]eval.ConfidenceModels `json:"models"`
			Rows   []eval.ConfidenceRow             `json:"calibration"`
		}{models, rows})
	}
	fmt.Fprintf(env.stdout, "%s\n%s", eval.ConfidenceModelsGo(models), eval.ConfidenceTable(rows))
	return nil
}

const fitConfidenceUsage = "usage: toolgate eval fit-confidence [--measure FILE[:odd|:even]]... [--l2 1] [--json] FILE[:odd|:even]..."
