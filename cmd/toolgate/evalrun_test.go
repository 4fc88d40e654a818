package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich/enrichtest"
	"github.com/toolgate/toolgate/internal/eval"
	"github.com/toolgate/toolgate/internal/evalrun"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/wordvec"
)

// TestEvalDataset runs `toolgate eval DIR` end to end on 10 companies: enrichment through
// River in an isolated database, every query through the search service, JSON report.
func TestEvalDataset(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (a whole server, evaluation or concurrent run): the full suite, make test, runs it")
	}
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
	// every answer's confidence is counted against the threshold of POST /search
	if c := rep.Calibration; c == nil || c.Searches != 21 || c.Threshold != search.ConfidenceThreshold ||
		c.Below.Searches+c.Above.Searches != 21 {
		t.Errorf("calibration %+v", rep.Calibration)
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
	// Bad search settings fail in one line, before anything is read or connected to.
	for _, args := range [][]string{
		{"eval", dir, "--set", "nope=1"},
		{"eval", dir, "--set", "k_rrf"},
		{"eval", dir, "--vary", "k_rrf=30,abc"},
		{"eval", dir, "--set", "candidates=0"},
		{"eval", dir, "--set", "k_rrf=1", "--vary", "k_rrf=1,2"},
	} {
		unreachable := map[string]string{"DATABASE_URL": "postgres://nobody@127.0.0.1:1/x"}
		if code, _, errOut := runCLI(t, unreachable, args...); code != 2 || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d (%s), want 2 and one line", args, code, errOut)
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
	env := evalEnv(t)
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

// evalDataset writes a 10-company ScaleMCP-style dataset (50 tools, 20 queries) to a new
// directory.
func evalDataset(t *testing.T, companies int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ds")
	if code, _, errOut := runCLI(t, nil, "dataset", "scalemcp", "--companies", strconv.Itoa(companies), "--single", "12",
		"--multi-tool", "3", "--multi-company", "3", "--multi-hop", "2", "--out", dir); code != 0 {
		t.Fatalf("dataset: %s", errOut)
	}
	return dir
}

// readEvalLines reads an --out file: one evalrun.Line per line.
func readEvalLines(t *testing.T, path string) []evalrun.Line {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []evalrun.Line
	for i, line := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n") {
		var l evalrun.Line
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("line %d is not a report: %v\n%s", i+1, err, line)
		}
		out = append(out, l)
	}
	return out
}

// --out gets one line per configuration, each recording the dataset, every search setting
// in effect and what the planner did; --vary makes one configuration per value, each with
// its own settings; a second run on the same dataset appends, another dataset is refused.
func TestEvalOutFile(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (a whole server, evaluation or concurrent run): the full suite, make test, runs it")
	}
	t.Parallel()
	env := evalEnv(t)
	dir := evalDataset(t, 10)
	ds, err := eval.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "results.jsonl")
	code, stdout, errOut := runCLI(t, env, "eval", dir, "--json", "--k", "1,5", "--mode", "lexical", "--plan", "none,decompose",
		"--set", "lexical_terms=1", "--vary", "postings=1,30", "--out", out)
	if code != 0 {
		t.Fatalf("eval: exit %d: %s", code, errOut)
	}
	lines := readEvalLines(t, out)
	labels := make([]string, len(lines))
	for i, l := range lines {
		labels[i] = l.Label
	}
	if want := []string{"lexical / postings=1", "lexical / postings=30", "lexical / plan decompose / postings=1", "lexical / plan decompose / postings=30"}; !slices.Equal(labels, want) {
		t.Fatalf("labels %q, want %q", labels, want)
	}
	reported := evalrun.SettingsRecord(search.DefaultSettings(), nil)
	for i, l := range lines {
		if l.Run == nil || l.Run.ID != lines[0].Run.ID || l.Run.Toolgate.Version == "" || !slices.Contains(l.Run.Args, "--vary") {
			t.Fatalf("line %d run %+v", i+1, l.Run)
		}
		if l.Dataset == nil || *l.Dataset != ds.Info || l.NQueries != 20 || len(l.Metrics) != 8 {
			t.Fatalf("line %d: dataset %+v (want %+v), %d queries, metrics %v", i+1, l.Dataset, ds.Info, l.NQueries, l.Metrics)
		}
		st := l.Config["search"].(map[string]any)
		for key := range reported {
			if _, ok := st[key]; !ok {
				t.Errorf("line %d: config.search lacks %s: %v", i+1, key, st)
			}
		}
		postings := []float64{1, 30}[i%2]
		if st["postings"] != postings || st["lexical_terms"] != 1.0 || st["k_rrf"] != 60.0 {
			t.Errorf("line %d: settings %v, want postings %v, lexical_terms 1", i+1, st, postings)
		}
		set := l.Config["set"].(map[string]any)
		if len(set) != 2 || set["lexical_terms"] != "1" || set["postings"] != fmt.Sprint(postings) {
			t.Errorf("line %d: set %v", i+1, set)
		}
		planner := st["planner"].(map[string]any)
		if planner["name"] != "heuristic" || planner["vocabulary"] != nil {
			t.Errorf("line %d: planner %v", i+1, planner)
		}
		for _, key := range []string{"embedder", "dims", "enricher", "questions", "ks", "queries_limit"} {
			if _, ok := l.Config[key]; !ok {
				t.Errorf("line %d: config lacks %s", i+1, key)
			}
		}
		if planned := i >= 2; l.Config["search_per_k"] != planned {
			t.Errorf("line %d: search_per_k %v", i+1, l.Config["search_per_k"])
		}
	}
	// Each configuration searched with its own settings: one posting per term finds less.
	if lines[0].Metrics["recall@5"] >= lines[1].Metrics["recall@5"] {
		t.Errorf("recall@5 with postings=1 %v, with 30 %v: want fewer found with 1", lines[0].Metrics["recall@5"], lines[1].Metrics["recall@5"])
	}
	// The heuristic planner without a vocabulary split nothing, and says so.
	warning := "eval: warning: plan decompose: the planner split 0 of 20 queries; the heuristic planner has no vocabulary, so it splits only requests of several tasks: to split by entity set TOOLGATE_PLAN_VOCABULARY to a JSON file of the catalog's names (docs/planning.md); on queries of one task each the scores are those of --plan none"
	if strings.Count(errOut, warning+"\n") != 2 {
		t.Errorf("stderr lacks the warning twice:\n%s", errOut)
	}
	for _, l := range lines[2:] {
		outcome := l.Config["plan_outcome"].(map[string]any)
		warnings := l.Config["warnings"].([]any)
		if outcome["queries"] != 20.0 || outcome["split"] != 0.0 || len(warnings) != 1 || !strings.HasPrefix(warnings[0].(string), "plan decompose: the planner split 0 of 20") {
			t.Errorf("%s: plan outcome %v, warnings %v", l.Label, outcome, warnings)
		}
	}
	if _, ok := lines[0].Config["plan_outcome"]; ok {
		t.Errorf("plan none has a plan outcome: %v", lines[0].Config)
	}
	// stdout has the same reports.
	var printed struct {
		Runs []evalrun.Line `json:"runs"`
	}
	if err := json.Unmarshal([]byte(stdout), &printed); err != nil || len(printed.Runs) != 4 ||
		printed.Runs[3].Label != lines[3].Label || !maps.Equal(printed.Runs[3].Metrics, lines[3].Metrics) {
		t.Fatalf("stdout (%v):\n%s", err, stdout)
	}

	// Another run on the same dataset appends its lines.
	if code, _, errOut := runCLI(t, env, "eval", dir, "--k", "1", "--mode", "lexical", "--queries-limit", "3", "--out", out); code != 0 {
		t.Fatalf("second run: exit %d: %s", code, errOut)
	}
	lines = readEvalLines(t, out)
	if len(lines) != 5 || lines[4].Run.ID == lines[0].Run.ID || lines[4].NQueries != 3 || lines[4].Label != "lexical / default plan" {
		t.Fatalf("after the second run: %d lines, last %+v", len(lines), lines[4])
	}
	// Another dataset is refused before any database work.
	other := evalDataset(t, 11)
	code, _, errOut = runCLI(t, env, "eval", other, "--mode", "lexical", "--out", out)
	if code != 1 || !strings.Contains(errOut, "line 1 holds results of another dataset") || strings.Contains(errOut, "created database") {
		t.Fatalf("other dataset: exit %d: %s", code, errOut)
	}
	if n := len(readEvalLines(t, out)); n != 5 {
		t.Fatalf("the refused run changed the file: %d lines", n)
	}
}

// cancelAfter is a stderr that cancels a run when it reports a finished configuration.
type cancelAfter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	cancel context.CancelFunc
}

var configDone = regexp.MustCompile(`(?m)^eval: .+: \d+ queries in `)

func (w *cancelAfter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if configDone.Match(p) {
		w.cancel()
	}
	return w.buf.Write(p)
}

func (w *cancelAfter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// A run interrupted after its first configuration keeps exactly that configuration's
// complete report in --out, prints its table, and still drops its database.
func TestEvalInterruptedKeepsFinishedConfigurations(t *testing.T) {
	t.Parallel()
	vars := evalEnv(t)
	cfg, err := config.Load(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	dir := evalDataset(t, 10)
	out := filepath.Join(t.TempDir(), "results.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout bytes.Buffer
	stderr := &cancelAfter{cancel: cancel}
	env := &cliEnv{cfg: cfg, log: newLogger(cfg, stderr), stdout: &stdout, stderr: stderr}
	err = runEvalDataset(ctx, env, []string{dir, "--k", "1,5", "--mode", "lexical", "--plan", "none", "--vary", "k_rrf=30,60,90", "--out", out})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v\n%s", err, stderr)
	}
	lines := readEvalLines(t, out)
	if len(lines) != 1 {
		t.Fatalf("%d lines, want the first configuration's only", len(lines))
	}
	l := lines[0]
	if l.Label != "lexical / k_rrf=30" || l.NQueries != 20 || len(l.Metrics) != 8 || len(l.ByKind) != 4 ||
		l.Config["search"].(map[string]any)["k_rrf"] != 30.0 || l.Dataset == nil {
		t.Fatalf("the kept line is not the complete first report: %+v", l)
	}
	for _, want := range []string{"interrupted in lexical / k_rrf=60; 1 of 3 configurations finished; results in " + out, "dropped database"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if !strings.Contains(stdout.String(), "| lexical / k_rrf=30 | 20 |") || strings.Contains(stdout.String(), "k_rrf=60") {
		t.Errorf("stdout is not the finished configuration's table:\n%s", stdout.String())
	}
}

// A planned configuration searches once per K (k=1 and k=5 rows in the retrieval log), as
// POST /search would be asked; an unplanned one searches once, with max K, which is exact:
// on a real database its top 1 is the answer to k=1.
func TestEvalPlannedSearchesPerK(t *testing.T) {
	t.Parallel()
	live := pgtest.NewDB(t)
	dir := evalDataset(t, 10)
	companies, err := dataset.Companies(10)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(dataset.Aliases(companies))
	vocab := writeFile(t, t.TempDir(), "vocab.json", string(raw))
	env := map[string]string{"DATABASE_URL": live, "TOOLGATE_LOG_LEVEL": "warn", "TOOLGATE_QUESTIONS": "1",
		"TOOLGATE_PLAN_VOCABULARY": vocab}
	code, stdout, errOut := runCLI(t, env, "eval", dir, "--json", "--k", "1,5", "--plan", "none,decompose", "--keep")
	if code != 0 {
		t.Fatalf("eval: exit %d: %s", code, errOut)
	}
	m := regexp.MustCompile(`kept database (toolgate_eval_[0-9a-f]+)`).FindStringSubmatch(errOut)
	if m == nil {
		t.Fatalf("no kept database in stderr: %s", errOut)
	}
	ctx := context.Background()
	t.Cleanup(func() {
		if c, err := pgx.Connect(ctx, pgtest.ServerURL()); err == nil {
			c.Exec(ctx, "DROP DATABASE IF EXISTS "+m[1]+" WITH (FORCE)")
			c.Close(ctx)
		}
	})
	var all struct {
		Runs []evalrun.Line `json:"runs"`
	}
	if err := json.Unmarshal([]byte(stdout), &all); err != nil || len(all.Runs) != 2 {
		t.Fatalf("stdout (%v): %s", err, stdout)
	}
	planned := all.Runs[1].Config
	outcome := planned["plan_outcome"].(map[string]any)
	planner := planned["search"].(map[string]any)["planner"].(map[string]any)
	if outcome["split"].(float64) == 0 || planned["warnings"] != nil || strings.Contains(errOut, "warning") ||
		planner["vocabulary"] != vocab || planner["vocabulary_entries"].(float64) == 0 {
		t.Fatalf("with a vocabulary: outcome %v, warnings %v, planner %v", outcome, planned["warnings"], planner)
	}

	pool, err := postgres.Connect(ctx, evalrun.DatabaseURL(live, m[1]))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	rows, err := pool.Query(ctx, `SELECT k, plan IS NOT NULL, count(*) FROM search_log GROUP BY 1, 2 ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var k, n int
		var withPlan bool
		err := r.Scan(&k, &withPlan, &n)
		return fmt.Sprintf("k=%d plan=%t: %d", k, withPlan, n), err
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"k=1 plan=true: 20", "k=5 plan=false: 20", "k=5 plan=true: 20"}; !slices.Equal(got, want) {
		t.Fatalf("searches %q, want %q", got, want)
	}

	// The claim behind searching once without a plan (evalPerK): the top 1 of k=5 is the
	// answer to k=1.
	ds, err := eval.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	// the embedder the run embedded the catalog with: the default, as nothing is configured
	svc := search.New(pool, embed.NewLocalWords(embed.DefaultLocalDims, wordvec.MustBuiltin()), search.DefaultSettings(),
		slog.New(slog.DiscardHandler))
	for _, q := range ds.Queries {
		var answers [][]string
		for _, k := range []int{5, 1} {
			resp, err := svc.Search(ctx, search.Internal(), search.Request{Query: q.Query, K: k})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, r := range resp.Results {
				names = append(names, r.Name)
			}
			answers = append(answers, names)
		}
		if len(answers[0]) == 0 || !slices.Equal(answers[0][:1], answers[1]) {
			t.Errorf("%s: k=5 %q, k=1 %q", q.ID, answers[0], answers[1])
		}
	}
}

// Without --plan, eval measures what POST /search does for a request that names no plan:
// the default plan (decompose), recorded in the report; --per-query writes each query's
// ranking and the rank of each of its gold tools, consistent with the report's recall.
func TestEvalDefaultPlanAndPerQuery(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (a whole server, evaluation or concurrent run): the full suite, make test, runs it")
	}
	t.Parallel()
	env := evalEnv(t)
	dir := evalDataset(t, 10)
	perQuery := filepath.Join(t.TempDir(), "queries.jsonl")
	code, stdout, errOut := runCLI(t, env, "eval", dir, "--json", "--k", "1,5", "--mode", "lexical", "--per-query", perQuery)
	if code != 0 {
		t.Fatalf("eval: exit %d: %s", code, errOut)
	}
	var rep evalrun.Line
	if err := json.Unmarshal([]byte(stdout), &rep.Report); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if rep.Report.Config["plan"] != "decompose" || rep.Report.Config["plan_default"] != true {
		t.Fatalf("config %v: want the default plan, decompose", rep.Report.Config)
	}
	raw, err := os.ReadFile(perQuery)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	if len(lines) != rep.Report.NQueries {
		t.Fatalf("%d per-query lines for %d queries", len(lines), rep.Report.NQueries)
	}
	var recall5 float64
	for i, line := range lines {
		var q evalrun.PerQueryLine
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if q.Config != "lexical / default plan" || q.Run == "" || q.ID == "" || q.Query == "" || len(q.Gold) == 0 || len(q.Results) > 5 {
			t.Fatalf("line %d: %s", i+1, line)
		}
		hits := 0
		for _, g := range q.Gold {
			if g.Rank != nil {
				if *g.Rank < 1 || *g.Rank > len(q.Results) || q.Results[*g.Rank-1] != g.Tool {
					t.Fatalf("line %d: gold %s at rank %d of %v", i+1, g.Tool, *g.Rank, q.Results)
				}
				hits++
			} else if slices.Contains(q.Results, g.Tool) {
				t.Fatalf("line %d: gold %s is in the results but has no rank", i+1, g.Tool)
			}
		}
		recall5 += float64(hits) / float64(len(q.Gold))
	}
	recall5 /= float64(len(lines))
	if got := rep.Report.Metrics["recall@5"]; math.Abs(got-recall5) > 1e-9 || got == 0 {
		t.Errorf("recall@5 %v in the report, %v from the per-query lines", got, recall5)
	}
}

// A model whose profiles cannot be repaired fails that step for every tool: eval says so,
// records it in the report, and scores the run on what the tools have.
func TestEvalReportsFailedEnrichmentAndGoesOn(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (a whole server, evaluation or concurrent run): the full suite, make test, runs it")
	}
	t.Parallel()
	f, llm := enrichtest.New(t)
	f.ProfileAnswer(`Sure! Here is the profile you asked for.`)
	env := map[string]string{"DATABASE_URL": pgtest.NewDB(t), "TOOLGATE_LOG_LEVEL": "error", "TOOLGATE_QUESTIONS": "1",
		"TOOLGATE_ENRICHER": "openai", "TOOLGATE_LLM_URL": llm.URL + "/v1", "TOOLGATE_LLM_KEY": enrichtest.Key, "TOOLGATE_LLM_MODEL": "fake-chat"}
	dir := evalDataset(t, 2)
	code, stdout, errOut := runCLI(t, env, "eval", dir, "--json", "--k", "5", "--mode", "lexical", "--plan", "none")
	if code != 0 {
		t.Fatalf("eval: exit %d: %s", code, errOut)
	}
	var rep eval.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	failed, _ := rep.Config["enrich_failed"].(map[string]any)
	steps, _ := failed["steps"].([]any)
	if failed["tools"] != 10.0 || failed["jobs"] != 0.0 || len(steps) != 5 || !strings.Contains(steps[0].(string), ": profile: not a JSON object") {
		t.Fatalf("enrich_failed %v", rep.Config["enrich_failed"])
	}
	if !strings.Contains(errOut, "eval: warning: 10 tools were stored without an enrichment step whose output was malformed beyond repair") {
		t.Errorf("stderr lacks the warning:\n%s", errOut)
	}
	if rep.NQueries == 0 || rep.Metrics["recall@5"] == 0 {
		t.Errorf("the run was not scored: %+v", rep)
	}
}

// evalEnv is the environment of an evaluation run in a test: a fresh database, quiet logs,
// one synthetic question per tool (enrichment is the slow part).
func evalEnv(t *testing.T) map[string]string {
	t.Helper()
	return map[string]string{"DATABASE_URL": pgtest.NewDB(t), "TOOLGATE_LOG_LEVEL": "warn", "TOOLGATE_QUESTIONS": "1"}
}
