package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/plan"
)

func TestPlanCommand(t *testing.T) {
	code, stdout, stderr := runCLI(t, nil, "plan", "--companies", "60", "Compare the 2023 revenue of AAPL, Ford and $tsla")
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, stderr)
	}
	var p plan.Plan
	if err := json.Unmarshal([]byte(stdout), &p); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range p.Intents {
		got = append(got, in.Query)
	}
	want := "Compare the 2023 revenue of Apple|Compare the 2023 revenue of Ford Motor|Compare the 2023 revenue of Tesla"
	if p.Planner != plan.NameHeuristic || p.Mode != plan.ModeFull || strings.Join(got, "|") != want {
		t.Errorf("plan %+v", p)
	}

	// A vocabulary file from the setting, and mode decompose.
	voc := filepath.Join(t.TempDir(), "voc.json")
	if err := os.WriteFile(voc, []byte(`{"pg": "PostgreSQL", "mysql": "MySQL"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = runCLI(t, map[string]string{"TOOLGATE_PLAN_VOCABULARY": voc}, "plan", "--mode", "decompose", "backup of PostgreSQL and MySQL")
	if code != 0 || !strings.Contains(stdout, `"query": "backup of PostgreSQL"`) || !strings.Contains(stdout, `"query": "backup of MySQL"`) {
		t.Errorf("code %d, stdout %s", code, stdout)
	}

	for _, args := range [][]string{
		{"plan"},
		{"plan", "--mode", "everything", "q"},
		{"plan", "--companies", "100000", "q"},
		{"plan", "rev of AAPL and F", "--companies", "1000"}, // a flag after the query
		{"plan", "q", "--mode=rewrite"},
	} {
		if code, _, stderr := runCLI(t, nil, args...); code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: code %d, stderr %q", args, code, stderr)
		}
	}
	if code, _, stderr := runCLI(t, nil, "plan", "--vocabulary", voc+".missing", "q"); code != 1 || !strings.Contains(stderr, "missing") {
		t.Errorf("missing vocabulary: code %d, stderr %q", code, stderr)
	}
}
