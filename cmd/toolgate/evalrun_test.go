package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/internal/eval"
	"github.com/toolgate/toolgate/internal/pgtest"
)

// TestEvalDataset runs `toolgate eval DIR` end to end on 10 companies: enrichment through
// River in an isolated database, every query through the search service, JSON report.
func TestEvalDataset(t *testing.T) {
	t.Parallel()
	live := pgtest.NewDB(t)
	env := map[string]string{"DATABASE_URL": live, "TOOLGATE_LOG_LEVEL": "warn", "TOOLGATE_QUESTIONS": "3"}
	dir := filepath.Join(t.TempDir(), "ds")
	if code, _, errOut := runCLI(t, nil, "dataset", "scalemcp", "--companies", "10", "--single", "12",
		"--multi-tool", "3", "--multi-company", "3", "--multi-hop", "2", "--out", dir); code != 0 {
		t.Fatalf("dataset: %s", errOut)
	}
	// An exact-name query must come back first (the search puts exactly named tools first).
	ds, err := eval.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	exact := ds.Tools[7].Name
	f, err := os.OpenFile(filepath.Join(dir, eval.QueriesFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	line, _ := json.Marshal(eval.Query{ID: "exact-1", Query: exact, Gold: []string{exact}, Kind: "exact"})
	f.Write(append(line, '\n'))
	f.Close()

	code, out, errOut := runCLI(t, env, "eval", dir, "--json", "--k", "1,5,10", "--mode", "hybrid", "--profile", "var-2")
	if code != 0 {
		t.Fatalf("eval: exit %d: %s", code, errOut)
	}
	var rep eval.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not one JSON report: %v\n%s", err, out)
	}
	if rep.NQueries != 21 || rep.Config["mode"] != "hybrid" || rep.Config["profile"] != "var-2" || rep.Config["tools"] != float64(50) {
		t.Fatalf("report header: n %d, config %v", rep.NQueries, rep.Config)
	}
	for _, kind := range []string{"single", "multi_tool", "multi_company", "multi_hop", "exact"} {
		if _, ok := rep.ByKind[kind]; !ok {
			t.Fatalf("by_kind lacks %s: %v", kind, rep.Kinds())
		}
	}
	if len(rep.Metrics) != 12 {
		t.Fatalf("metrics %v", rep.Metrics)
	}
	for name, v := range rep.Metrics {
		if v < 0 || v > 1 {
			t.Errorf("%s = %v, outside [0,1]", name, v)
		}
	}
	if rep.Metrics["recall@10"] == 0 {
		t.Errorf("recall@10 is 0: the search found nothing")
	}
	if got := rep.ByKind["exact"].Metrics["recall@1"]; got != 1 {
		t.Errorf("exact-name query recall@1 = %v, want 1", got)
	}
	if rep.LatencyMS.P50 <= 0 || rep.LatencyMS.P95 < rep.LatencyMS.P50 {
		t.Errorf("latency %+v", rep.LatencyMS)
	}

	// The isolated database is gone and the live one never saw a tool.
	m := regexp.MustCompile(`dropped database (toolgate_eval_[0-9a-f]+)`).FindStringSubmatch(errOut)
	if m == nil {
		t.Fatalf("no dropped database in stderr: %s", errOut)
	}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, pgtest.ServerURL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var exists bool
	if err := admin.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, m[1]).Scan(&exists); err != nil || exists {
		t.Fatalf("database %s still exists (%v)", m[1], err)
	}
	lc, err := pgx.Connect(ctx, live)
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close(ctx)
	var tools, sources int
	if err := lc.QueryRow(ctx, `SELECT (SELECT count(*) FROM tools), (SELECT count(*) FROM sources)`).Scan(&tools, &sources); err != nil || tools != 0 || sources != 0 {
		t.Fatalf("live database has %d tools, %d sources (%v)", tools, sources, err)
	}

	// Every mode × profile × plan in one run: {"runs": [...]}, lexical once per plan.
	code, out, errOut = runCLI(t, env, "eval", dir, "--json", "--k", "5", "--mode", "all", "--profile", "all",
		"--plan", "none,full", "--queries-limit", "7")
	if code != 0 {
		t.Fatalf("eval all: exit %d: %s", code, errOut)
	}
	var all struct {
		Runs []eval.Report `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &all); err != nil {
		t.Fatal(err)
	}
	if len(all.Runs) != 22 || all.Runs[0].Config["mode"] != "lexical" || all.Runs[0].NQueries != 7 ||
		all.Runs[1].Config["plan"] != "full" || all.Runs[2].Config["profile"] != "concat" {
		t.Fatalf("%d runs, first %v, second %v", len(all.Runs), all.Runs[0].Config, all.Runs[1].Config)
	}
	// The 7 queries are spread over the file: not only the single-tool ones at its start.
	if len(all.Runs[0].ByKind) < 4 {
		t.Fatalf("--queries-limit 7 took kinds %v", all.Runs[0].Kinds())
	}
}

func TestEvalDatasetBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"eval"},
		{"eval", dir, "--mode", "sideways"},
		{"eval", dir, "--k", "0"},
		{"eval", dir, "--k", "101"},
		{"eval", dir, "--questions", "-1"},
		{"eval", dir, "--plan", "sometimes"},
		{"eval", dir, "extra", "args"},
	} {
		if code, _, errOut := runCLI(t, nil, args...); code != 2 {
			t.Errorf("%v: exit %d (%s), want 2", args, code, errOut)
		}
	}
	// An unknown profile fails before the enrichment, and the database is still dropped.
	ds := t.TempDir()
	if code, _, errOut := runCLI(t, nil, "dataset", "scalemcp", "--companies", "1", "--single", "1",
		"--multi-tool", "0", "--multi-company", "0", "--multi-hop", "0", "--out", ds); code != 0 {
		t.Fatalf("dataset: %s", errOut)
	}
	code, _, errOut := runCLI(t, map[string]string{"DATABASE_URL": pgtest.NewDB(t)}, "eval", ds, "--profile", "default,nope")
	if code != 2 || !strings.Contains(errOut, `no weight profile named "nope"`) || !strings.Contains(errOut, "dropped database") ||
		strings.Contains(errOut, "enrichment") {
		t.Fatalf("unknown profile: exit %d, %q", code, errOut)
	}
	// A directory without a dataset fails before any database is created.
	code, _, errOut = runCLI(t, map[string]string{"DATABASE_URL": "postgres://nobody@127.0.0.1:1/x"}, "eval", dir)
	if code != 1 || !regexp.MustCompile(`tools\.jsonl`).MatchString(errOut) {
		t.Fatalf("missing dataset: exit %d, %q", code, errOut)
	}
}

// A dataset whose tools are named as real servers name them (a space, "&") is evaluated
// like any other: its tools load under their catalog names and the ranked names are the
// dataset's own, so the gold lists match.
func TestEvalDatasetWithServerNames(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DATABASE_URL": pgtest.NewDB(t), "TOOLGATE_LOG_LEVEL": "warn", "TOOLGATE_QUESTIONS": "1"}
	dir := t.TempDir()
	writeFile(t, dir, eval.ToolsFile, `{"name":"PDF&URLTool","description":"Read the text of a PDF document at a URL"}`+"\n"+
		`{"name":"requestFirst Aid Assistance","description":"Call first aid assistance to an injured person"}`+"\n"+
		`{"name":"get_weather","description":"Weather forecast for a city"}`+"\n")
	writeFile(t, dir, eval.QueriesFile, `{"id":"1","query":"read this PDF document","gold":["PDF&URLTool"]}`+"\n"+
		`{"id":"2","query":"someone is injured, call first aid","gold":["requestFirst Aid Assistance"]}`+"\n")
	code, out, errOut := runCLI(t, env, "eval", dir, "--json", "--k", "1", "--mode", "lexical")
	if code != 0 {
		t.Fatalf("eval: exit %d: %s", code, errOut)
	}
	var rep eval.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not one JSON report: %v\n%s", err, out)
	}
	if rep.NQueries != 2 || rep.Metrics["recall@1"] != 1 {
		t.Fatalf("report: %d queries, metrics %v; want both gold tools ranked first", rep.NQueries, rep.Metrics)
	}
}
