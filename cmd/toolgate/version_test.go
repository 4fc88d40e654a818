package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A binary built the way the Makefile builds it (make build, and the Dockerfile through make
// toolgate) says which version and commit it is, not "devel".
func TestMakeToolgateIsStamped(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (links a whole binary): the full suite, make test, runs it")
	}
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	build := exec.Command("make", "-s", "toolgate", "BIN="+bin)
	build.Dir = root
	build.Env = append(os.Environ(), "VERSION=", "COMMIT=", "BUILD_DATE=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make toolgate: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(bin, "toolgate"), "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.TrimSpace(string(out))
	raw, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	want, commit := "toolgate "+strings.TrimSpace(string(raw)), ""
	// In a git checkout the commit is stamped too, and a release tag names the version.
	if head, err := exec.Command("git", "-C", root, "rev-parse", "--short=12", "HEAD").Output(); err == nil {
		commit = "(commit " + strings.TrimSpace(string(head))
		if tag, err := exec.Command("git", "-C", root, "describe", "--tags", "--match", "v[0-9]*", "--abbrev=12").Output(); err == nil {
			want = "toolgate " + strings.TrimPrefix(strings.TrimSpace(string(tag)), "v")
		}
	}
	if !strings.HasPrefix(got, want) || !strings.Contains(got, commit) || strings.Contains(got, "devel") {
		t.Fatalf("toolgate version = %q, want %q and %q", got, want, commit)
	}
}
