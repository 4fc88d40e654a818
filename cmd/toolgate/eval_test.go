package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/eval"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestEvalCalls(t *testing.T) {
	dir := t.TempDir()
	gold := writeFile(t, dir, "gold.jsonl", `{"id":"1","steps":[[{"name":"Stock_Price","arguments":{"ticker":"AAPL"}}]]}`+"\n")
	pred := writeFile(t, dir, "pred.jsonl", `{"id":"1","steps":[[{"name":"Get_Stock_Price","arguments":{"ticker":"AAPL"}}]]}`+"\n")
	code, out, errOut := runCLI(t, nil, "eval", "calls", "--gold", gold, "--pred", pred, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var s eval.CallScores
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	if s.NSamples != 1 || s.WeightedScore != 0.5 || s.ToolRecall != 0 {
		t.Fatalf("scores %+v", s)
	}
	code, out, _ = runCLI(t, nil, "eval", "calls", "--gold", gold, "--pred", pred)
	if code != 0 || !strings.Contains(out, "weighted score   0.500") {
		t.Fatalf("text output (exit %d):\n%s", code, out)
	}

	bad := writeFile(t, dir, "bad.jsonl", "{\"id\":\"1\",\"steps\":[]}\nnot json\n")
	code, _, errOut = runCLI(t, nil, "eval", "calls", "--gold", gold, "--pred", bad)
	if code != 1 || !strings.Contains(errOut, "bad.jsonl") || !strings.Contains(errOut, "line 2") {
		t.Fatalf("bad trace file: exit %d, %q", code, errOut)
	}
	if code, _, _ := runCLI(t, nil, "eval", "calls", "--gold", gold); code != 2 {
		t.Fatalf("missing --pred: exit %d", code)
	}
	if code, _, _ := runCLI(t, nil, "eval"); code != 2 {
		t.Fatalf("bare eval: exit %d", code)
	}
}

func TestDatasetCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "ds")
	code, stdout, errOut := runCLI(t, nil, "dataset", "scalemcp", "--companies", "20", "--seed", "3", "--single", "10", "--multi-tool", "2", "--multi-company", "2", "--multi-hop", "1", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(stdout, "100 tools and 15 queries") {
		t.Fatalf("stdout %q", stdout)
	}
	ds, err := eval.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Tools) != 100 || len(ds.Queries) != 15 {
		t.Fatalf("loaded %d tools, %d queries", len(ds.Tools), len(ds.Queries))
	}
	for _, args := range [][]string{
		{"dataset", "scalemcp", "--companies", "0", "--out", out},
		{"dataset", "scalemcp", "--companies", "5"},
		{"dataset", "other", "--out", out},
		{"dataset", "scalemcp", "--single", "-1", "--out", out},
	} {
		if code, _, _ := runCLI(t, nil, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}
