package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/plan"
)

// keysCreate creates an API key and prints it, the only time it is shown.
func keysCreate(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags("keys create", env)
	name := fs.String("name", "", "key name, unique among active keys")
	scope := fs.String("scope", "", "search or admin")
	sources := fs.String("sources", "", "comma-separated sources the key may see (default: every source)")
	rate := fs.Int("rate", auth.DefaultRatePerMin, "requests per minute; 0 for unlimited")
	planMode := fs.String("plan", "", "query plan of the key's searches that ask for none: none, rewrite, decompose or full")
	tenant := fs.String("tenant", "", "the search key's tenant: keys of one tenant learn from one another's searches (default: a tenant of its own)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *name == "" || *scope == "" || fs.NArg() > 0 {
		return &cli.UsageError{Msg: "want --name NAME --scope admin|search [--sources a,b] [--rate N] [--plan MODE] [--tenant NAME]"}
	}
	pool, err := openReady(ctx, env)
	if err != nil {
		return err
	}
	defer pool.Close()
	keys := auth.NewKeys(pool, time.Now)
	spec := auth.Spec{Name: *name, Scope: auth.Scope(*scope), RatePerMin: *rate, Plan: plan.Mode(*planMode), Tenant: *tenant}
	if *sources != "" {
		for src := range strings.SplitSeq(*sources, ",") {
			spec.Sources = append(spec.Sources, strings.TrimSpace(src))
		}
	}
	key, text, err := keys.Create(ctx, spec)
	if err != nil {
		return err
	}
	fmt.Fprintln(env.stdout, text)
	fmt.Fprintf(env.stderr, "created %s key %q (prefix %s); the key above is shown only once: store it now\n",
		key.Scope, key.Name, key.Prefix)
	return nil
}

func keysList(ctx context.Context, env *cliEnv, pool *pgxpool.Pool, _ []string) error {
	list, err := auth.NewKeys(pool, time.Now).List(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPREFIX\tSCOPE\tSOURCES\tRATE/MIN\tPLAN\tTENANT\tCREATED\tLAST USED\tREVOKED")
	for _, k := range list {
		srcs := "*"
		if k.Sources != nil {
			srcs = strings.Join(k.Sources, ",")
		}
		rate := "-"
		if k.RatePerMin > 0 {
			rate = fmt.Sprint(k.RatePerMin)
		}
		keyPlan := "-"
		if k.Plan != "" {
			keyPlan = string(k.Plan)
		}
		tenant := "-" // its own
		if k.Tenant != nil {
			tenant = *k.Tenant
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.Name, k.Prefix, k.Scope, srcs, rate, keyPlan, tenant,
			k.CreatedAt.UTC().Format(time.RFC3339), timeOrDash(k.LastUsedAt), timeOrDash(k.RevokedAt))
	}
	return tw.Flush()
}

func keysRevoke(ctx context.Context, env *cliEnv, pool *pgxpool.Pool, args []string) error {
	revoked, err := auth.NewKeys(pool, time.Now).Revoke(ctx, args[0])
	if err != nil {
		return err
	}
	for _, k := range revoked {
		fmt.Fprintf(env.stdout, "revoked %q (prefix %s)\n", k.Name, k.Prefix)
	}
	return nil
}

func timeOrDash(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
