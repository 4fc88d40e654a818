package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/pgtest"
)

func TestExperimentsCommand(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDB(t)
	getenv := func(k string) string {
		if k == "DATABASE_URL" {
			return url
		}
		return ""
	}
	toolgate := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(args, getenv, &out, &errOut)
		return code, out.String(), errOut.String()
	}

	// An empty catalog: every profile is searchable (nothing to build).
	code, out, stderr := toolgate("experiments", "start", "q-test", "--candidate", "var-1", "--share", "0.25")
	if code != 0 || !strings.Contains(out, "experiment q-test started") || !strings.Contains(out, "0.25 of the sessions to var-1, the rest to default") {
		t.Fatalf("start: exit %d %q %q", code, out, stderr)
	}
	if code, _, stderr := toolgate("experiments", "start", "q-two", "--candidate", "var-2", "--share", "0.5"); code != 1 ||
		!strings.Contains(stderr, `experiment "q-test" is running`) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("second start: exit %d %q, want one line", code, stderr)
	}
	if code, _, stderr := toolgate("experiments", "start", "q-two", "--candidate", "var-2", "--share", "2"); code != 1 || !strings.Contains(stderr, "share") {
		t.Errorf("bad share: exit %d %q", code, stderr)
	}
	code, out, _ = toolgate("experiments", "list")
	if code != 0 || !strings.Contains(out, "q-test") || !strings.Contains(out, "var-1") {
		t.Errorf("list: exit %d %q", code, out)
	}
	code, out, _ = toolgate("experiments", "show", "q-test")
	var rep struct {
		Name string `json:"name"`
		Arms []struct {
			Arm      string `json:"arm"`
			Searches int    `json:"searches"`
		} `json:"arms"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || rep.Name != "q-test" || len(rep.Arms) != 2 || rep.Arms[0].Arm != "control" {
		t.Errorf("show: exit %d %q %v", code, out, err)
	}
	var capped struct {
		MaxPerKey int `json:"max_per_key"`
	}
	code, out, stderr = toolgate("experiments", "show", "q-test", "--max-per-key", "4")
	if err := json.Unmarshal([]byte(out), &capped); code != 0 || err != nil || capped.MaxPerKey != 4 {
		t.Errorf("show --max-per-key 4: exit %d %q %q %v", code, out, stderr, err)
	}
	if code, _, stderr := toolgate("experiments", "show", "q-test", "--max-per-key", "0"); code != 2 || !strings.Contains(stderr, "max-per-key") {
		t.Errorf("show --max-per-key 0: exit %d %q, want 2 (usage)", code, stderr)
	}
	if code, out, _ := toolgate("experiments", "stop", "q-test"); code != 0 || !strings.Contains(out, "experiment q-test stopped") {
		t.Errorf("stop: exit %d %q", code, out)
	}
	if code, _, stderr := toolgate("experiments", "show", "nope"); code != 1 || !strings.Contains(stderr, `no experiment named "nope"`) {
		t.Errorf("show unknown: exit %d %q", code, stderr)
	}
	for _, args := range [][]string{{"experiments"}, {"experiments", "start"}, {"experiments", "bogus"}, {"experiments", "show"},
		{"experiments", "start", "x", "--candidate", "var-1", "--share", "0.5", "extra"}} {
		if code, _, _ := toolgate(args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage)", args, code)
		}
	}
}
