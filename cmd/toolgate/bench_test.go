package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The served binary links no benchmark-only code: the Bleve peer and the plotting
// library are toolgate-bench's.
func TestServedBinaryLinksNoBenchmarkCode(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/blevesearch/", "gonum.org/v1/plot", "github.com/toolgate/toolgate/internal/bench/"} {
			if strings.HasPrefix(pkg, banned) {
				t.Errorf("toolgate links %s", pkg)
			}
		}
	}
}

// toolgate bench runs toolgate-bench from PATH with its arguments, stdout, stderr and exit
// code; without one it says how to build it.
func TestBenchRunsToolgateBench(t *testing.T) {
	dir := t.TempDir()
	script := "#!/bin/sh\necho \"args: $*\"\necho oops >&2\nexit 3\n"
	if err := os.WriteFile(filepath.Join(dir, "toolgate-bench"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	code, stdout, stderr := runCLI(t, nil, "bench", "search", "--tools", "5000")
	if code != 3 || stdout != "args: search --tools 5000\n" || stderr != "oops\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, _ = runCLI(t, nil, "bench", "--help")
	if code != 3 || !strings.Contains(stdout, "usage: toolgate bench") || !strings.Contains(stdout, "args: --help") {
		t.Fatalf("bench --help: exit %d, stdout %q", code, stdout)
	}

	t.Setenv("PATH", t.TempDir())
	code, _, stderr = runCLI(t, nil, "bench", "search")
	if code != 1 || !strings.Contains(stderr, "go build -o bin/toolgate-bench ./cmd/toolgate-bench") {
		t.Fatalf("without toolgate-bench: exit %d, stderr %q", code, stderr)
	}
	if code, stdout, _ := runCLI(t, nil, "bench", "--help"); code != 0 || !strings.Contains(stdout, "found neither beside toolgate nor on PATH") {
		t.Fatalf("bench --help without toolgate-bench: exit %d, stdout %q", code, stdout)
	}
}
