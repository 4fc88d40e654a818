package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// TestProfilesTuneCommand: `profiles tune` refuses in one line without enough labels; with
// them, on a catalog every weighting ranks perfectly, --wait tunes in the process and says
// it found nothing better than the baseline (and creates no copy of it); `profiles tunes`
// lists the tune; a taken name and bad flags are refused.
func TestProfilesTuneCommand(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDB(t)
	getenv := func(k string) string {
		switch k {
		case "DATABASE_URL":
			return url
		case "TOOLGATE_EMBEDDER":
			return "local" // the embedder of testfactory.LocalEnricher, which embeds the catalog
		}
		return ""
	}
	toolgate := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(args, getenv, &out, &errOut)
		return code, out.String(), errOut.String()
	}
	ctx := context.Background()
	pool, err := postgres.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	words := []string{"invoice", "contract", "mailbox", "playlist", "warehouse", "vaccine", "telescope", "glacier",
		"orchestra", "satellite", "greenhouse", "bicycle", "volcano", "lighthouse", "museum", "harbor"}
	var tools []catalog.Tool
	var uses []testfactory.Use
	for _, w := range words {
		for _, verb := range []string{"archive", "inspect"} {
			name := verb + "_" + w
			tools = append(tools, testfactory.Tool(name, fmt.Sprintf("Use this to %s a %s record by its id.", verb, w)))
			for _, q := range []string{"%s the %s", "please %s my %s"} {
				uses = append(uses, testfactory.Use{Query: fmt.Sprintf(q, verb, w), Tools: []string{name}})
			}
		}
	}
	_, res := testfactory.Catalog(ctx, t, pool, "ws", tools, nil)
	testfactory.Enrich(ctx, t, testfactory.LocalEnricher(pool, 3), res.Changed...)

	code, _, stderr := toolgate("profiles", "tune", "learned", "--wait")
	if code != 1 || !strings.Contains(stderr, "too few labels") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Fatalf("tune without labels: exit %d %q, want one line", code, stderr)
	}

	svc := search.New(pool, embed.NewLocal(384), search.DefaultSettings(), slog.New(slog.DiscardHandler))
	if n := testfactory.Labels(ctx, t, svc, "ws", uses); n < 50 {
		t.Fatalf("only %d searches labelled", n)
	}

	code, out, stderr := toolgate("profiles", "tune", "learned", "--wait", "--baseline", "var-2")
	if code != 0 || !strings.Contains(out, "held-out MRR (fused ranking): var-2 1.0000, tuned 1.0000") || !strings.Contains(out, "no profile created") {
		t.Fatalf("tune --wait: exit %d %q %q", code, out, stderr)
	}
	if code, _, stderr := toolgate("profiles", "show", "learned"); code != 1 || !strings.Contains(stderr, "no weight profile") {
		t.Errorf("show learned: exit %d %q, want no such profile", code, stderr)
	}
	if code, out, _ := toolgate("profiles", "tunes"); code != 0 || !strings.Contains(out, "learned") || !strings.Contains(out, "succeeded") {
		t.Errorf("tunes: exit %d %q", code, out)
	}
	if code, _, stderr := toolgate("profiles", "tune", "var-1"); code != 1 || !strings.Contains(stderr, "already exists") {
		t.Errorf("tune into var-1: exit %d %q", code, stderr)
	}
	if code, _, stderr := toolgate("profiles", "tune", "other", "--holdout", "0.95"); code == 0 || !strings.Contains(stderr, "holdout") {
		t.Errorf("bad holdout: exit %d %q", code, stderr)
	}
}
