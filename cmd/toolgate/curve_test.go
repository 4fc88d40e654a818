package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/eval"
	"github.com/toolgate/toolgate/internal/evalrun"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// TestEvalLearningCurve runs `toolgate eval --traffic-split` on a small catalog whose
// descriptions mislead (testfactory.MisleadingCatalog): one phrasing of each tool's job is
// the traffic, another the test. The key that replays the traffic gains from it; a key of
// another tenant answers exactly as before; open mode gains too. Observed queries are on:
// the operator's replay makes some, one key's does not (it is not k-anonymous).
func TestEvalLearningCurve(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (an evaluation run): the full suite, make test, runs it")
	}
	t.Parallel()
	env := evalEnv(t)
	env["TOOLGATE_OBSERVED_QUERIES"] = "5"
	dir := t.TempDir()
	tools, uses := testfactory.MisleadingCatalog()
	var tb, qb strings.Builder
	for _, tool := range tools {
		line, _ := json.Marshal(tool)
		tb.Write(append(line, '\n'))
	}
	for i, u := range uses {
		kind := map[int]string{0: "traffic", 2: "test"}[i%3]
		if kind == "" {
			continue
		}
		line, _ := json.Marshal(eval.Query{ID: fmt.Sprint(i), Query: u.Query, Gold: u.Tools, Kind: kind})
		qb.Write(append(line, '\n'))
	}
	writeFile(t, dir, eval.ToolsFile, tb.String())
	writeFile(t, dir, eval.QueriesFile, qb.String())
	out := filepath.Join(t.TempDir(), "curve.jsonl")
	code, stdout, errOut := runCLI(t, env, "eval", dir, "--traffic-split", "kind:traffic", "--json", "--out", out)
	if code != 0 {
		t.Fatalf("eval: exit %d: %s", code, errOut)
	}
	var got struct {
		Curves []evalrun.Curve `json:"curves"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || len(got.Curves) != 2 {
		t.Fatalf("want {\"curves\": [key, open]}: %v\n%s", err, stdout)
	}
	key, open := got.Curves[0], got.Curves[1]
	if key.Replay != evalrun.CurveKey || open.Replay != evalrun.CurveOpen || key.Traffic != 48 || key.Test != 48 {
		t.Fatalf("curves %q %q, %d traffic, %d test; want key and open over 48 and 48", key.Replay, open.Replay, key.Traffic, key.Test)
	}
	r := func(p evalrun.CurvePoint, who, m string) float64 { return p.Callers[who].Metrics[m] }
	for _, cv := range got.Curves {
		if len(cv.Points) != 4 || cv.Points[0].Fraction != 0 || cv.Points[3].Fraction != 1 || cv.Points[3].Replayed != 48 {
			t.Fatalf("%s: points %+v, want 0, 25, 50, 100%% of 48", cv.Label, cv.Points)
		}
		first, last := cv.Points[0], cv.Points[3]
		if first.Memories != 0 || last.Memories == 0 || last.Labelled == 0 {
			t.Errorf("%s: %d memories at 0%%, %d (of %d labelled searches) at 100%%", cv.Label, first.Memories, last.Memories, last.Labelled)
		}
		if wantObserved := cv.Replay == evalrun.CurveOpen; first.Observed != 0 || (last.Observed > 0) != wantObserved {
			t.Errorf("%s: %d observed queries at 0%%, %d at 100%%; want some at 100%% only in open mode", cv.Label, first.Observed, last.Observed)
		}
		who := map[string]string{evalrun.CurveKey: "key", evalrun.CurveOpen: "open"}[cv.Replay]
		t.Logf("%s: R@1 %.3f → %.3f, R@5 %.3f → %.3f", cv.Label, r(first, who, "recall@1"), r(last, who, "recall@1"),
			r(first, who, "recall@5"), r(last, who, "recall@5"))
		if r(last, who, "recall@1") <= r(first, who, "recall@1") || r(last, who, "recall@5") < r(first, who, "recall@5") {
			t.Errorf("%s: R@1 %.3f → %.3f, R@5 %.3f → %.3f; want a gain from the traffic", cv.Label,
				r(first, who, "recall@1"), r(last, who, "recall@1"), r(first, who, "recall@5"), r(last, who, "recall@5"))
		}
	}
	for _, p := range key.Points {
		for _, m := range []string{"recall@1", "recall@5", "recall@10", "completeness@5"} {
			if r(p, "other_key", m) != r(key.Points[0], "other_key", m) {
				t.Errorf("other tenant's %s moved to %.3f at %g%% (%.3f at 0%%)", m, r(p, "other_key", m), p.Fraction*100, r(key.Points[0], "other_key", m))
			}
		}
	}
	// every point of every caller is a line of --out
	if lines := readEvalLines(t, out); len(lines) != 4*3 || lines[0].Config["caller"] != "key" || lines[0].Config["traffic_split"] != "kind:traffic" {
		t.Fatalf("%d lines in --out (want 12), first config %v", len(lines), lines[0].Config)
	}
	// the tables name both callers
	code, stdout, errOut = runCLI(t, env, "eval", dir, "--traffic-split", "0.5", "--kind", "traffic", "--k", "1,5")
	if code != 0 || !strings.Contains(stdout, "other_key R@5") || !strings.Contains(stdout, "| 100% | 24 |") {
		t.Fatalf("tables (exit %d, %s):\n%s", code, errOut, stdout)
	}
	for _, bad := range [][]string{{"--traffic-split", "1.5"}, {"--traffic-split", "kind:"}, {"--traffic-split", "kind:none"}, {"--kind", "none"}} {
		if code, _, _ := runCLI(t, env, append([]string{"eval", dir}, bad...)...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}
