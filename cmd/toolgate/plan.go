package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/plan"
)

const planUsage = "usage: toolgate plan [--mode none|rewrite|decompose|full] [--companies N | --vocabulary FILE] QUERY"

// runPlan prints the heuristic planner's plan of a query as JSON (docs/planning.md).
func runPlan(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags("plan", env)
	mode := fs.String("mode", string(plan.ModeFull), "plan mode: none, rewrite, decompose or full")
	vocabulary := fs.String("vocabulary", env.cfg.PlanVocabulary, "JSON file of entity surface form → canonical name (TOOLGATE_PLAN_VOCABULARY)")
	companies := fs.Int("companies", 0, fmt.Sprintf("use the first N companies of the ScaleMCP dataset as the vocabulary, 1 to %d", dataset.MaxCompanies()))
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	for _, a := range fs.Args() {
		// the flag package stops at the query's first word: a flag after it would be planned
		// as words of the query
		if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "-") && fs.Lookup(name) != nil {
			return &cli.UsageError{Msg: fmt.Sprintf("%s after the query: flags go before it (%s)", a, planUsage)}
		}
	}
	query := strings.TrimSpace(strings.Join(fs.Args(), " "))
	if query == "" {
		return &cli.UsageError{Msg: planUsage}
	}
	m, err := plan.ParseMode(*mode)
	if err != nil {
		return &cli.UsageError{Msg: err.Error()}
	}
	var aliases map[string]string
	switch {
	case *companies != 0:
		cs, err := dataset.Companies(*companies)
		if err != nil {
			return &cli.UsageError{Msg: err.Error()}
		}
		aliases = dataset.Aliases(cs)
	case *vocabulary != "":
		if aliases, err = plan.LoadVocabulary(*vocabulary); err != nil {
			return err
		}
	}
	p, err := plan.NewHeuristic(aliases).Plan(ctx, query, m)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(env.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(p)
}
