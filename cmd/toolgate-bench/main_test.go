package main

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
)

// runCLI runs toolgate-bench with args and the settings of env, returning the exit code,
// stdout and stderr.
func runCLI(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, func(k string) string { return env[k] }, &out, &errOut)
	return code, out.String(), errOut.String()
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A benchmark's own defaults are the ones its help shows.
func TestHelpShowsEachBenchmarksDefaults(t *testing.T) {
	t.Parallel()
	for sub, want := range map[string]string{"load": `(default "8,32,128")`, "peer": `(default "1,8")`, "search": `(default "8")`} {
		if code, stdout, _ := runCLI(t, nil, sub, "--help"); code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("%s --help: exit %d, no %s:\n%s", sub, code, want, stdout)
		}
	}
}

func TestBenchCatalog(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "tools.jsonl", `{"name":"a","description":"A.","input_schema":{"type":"object"}}`+"\n"+`{"name":"b","description":"B.","input_schema":{"type":"object"}}`+"\n")
	plot := filepath.Join(dir, "catalog.png")
	code, out, errOut := runCLI(t, nil, "catalog", "--file", file, "--runs", "3", "--warmup", "1", "--concurrency", "1,2", "--png", plot)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"### Catalog parsing and hashing", "Command: `toolgate bench catalog --file", "Machine: ", "| parse 2 tools (0 KiB) | 1 | 3 | 0 |", "| parse+hash 2 tools (0 KiB) | 2 | 3 | 0 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	f, err := os.Open(plot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Fatal(err)
	}

	code, out, _ = runCLI(t, nil, "--help")
	if code != 0 || !strings.Contains(out, "catalog") {
		t.Fatalf("bench --help: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{{}, {"nope"}, {"catalog", "--concurrency", "0"}, {"catalog", "--runs", "0"}, {"catalog", "--duration", "soon"}} {
		if code, _, _ := runCLI(t, nil, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if code, _, _ := runCLI(t, nil, "catalog", "--file", filepath.Join(dir, "missing.jsonl")); code != 1 {
		t.Errorf("missing file: exit %d, want 1", code)
	}
}

func TestBenchSyncCommand(t *testing.T) {
	dbURL := pgtest.NewDB(t)
	getenv := func(k string) string {
		if k == "DATABASE_URL" {
			return dbURL
		}
		return ""
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"sync", "--file", "../../testdata/scalemcp-1000/tools.jsonl", "--runs", "2", "--warmup", "0"}, getenv, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"### Sync diff", "sync diff 5000 tools, no change", "sync diff 5000 tools, 1% changed"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q:\n%s", want, out.String())
		}
	}
	pool, err := postgres.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if srcs, err := db.New(pool).ListSources(context.Background()); err != nil || len(srcs) != 0 {
		t.Fatalf("temporary source left behind: %d %v", len(srcs), err)
	}
}
