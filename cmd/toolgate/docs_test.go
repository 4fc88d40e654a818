package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/pgtest"
)

// The docs are executed: every fenced block marked `<!-- runnable -->` in README.md and
// docs/*.md runs, command by command, against a demo server (`toolgate demo`, its whole
// catalog enriched, on localhost:8080) and a keyed demo beside it on the same database
// (`toolgate demo --keys`, on localhost:8081, taking browser requests from
// https://chat.example.com, its ADMIN_KEY and SEARCH_KEY in the
// commands' environment), in a directory of their own, and each command must succeed and
// print the output lines the block shows under it (docExample). A page that drifts from the
// product fails here.
func TestDocsExamplesRunAgainstTheDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (a whole server, evaluation or concurrent run): the full suite, make test, runs it")
	}
	t.Parallel()
	pages := docPages(t)
	var blocks []docBlock
	for _, page := range pages {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		bs, err := parseRunnable(page, raw)
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, bs...)
	}
	if len(blocks) == 0 {
		t.Fatal("no runnable blocks in the docs")
	}

	addr := freeAddr(t)
	dbURL := pgtest.NewDB(t)
	logPath := filepath.Join(t.TempDir(), "demo.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	demo := exec.Command(os.Args[0], "demo", "--listen", addr)
	demo.Env = append(os.Environ(), runMainEnv+"=1", "DATABASE_URL="+dbURL, "TOOLGATE_LOG_FORMAT=json")
	demo.Stdout, demo.Stderr = logFile, logFile
	if err := demo.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = demo.Process.Kill()
		_ = demo.Wait()
		logFile.Close()
		if t.Failed() {
			out, _ := os.ReadFile(logPath)
			t.Logf("demo log (tail):\n%s", tail(out, 4000))
		}
	})
	waitDemoEnriched(t, "http://"+addr)
	keyedAddr, demoKeys := startKeyedDemo(t, dbURL)

	// `toolgate` in a block is this binary acting as the command, on the demo's database.
	bin := t.TempDir()
	wrapper := fmt.Sprintf("#!/bin/sh\n%s=1 DATABASE_URL='%s' exec '%s' \"$@\"\n", runMainEnv, dbURL, os.Args[0])
	if err := os.WriteFile(filepath.Join(bin, "toolgate"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	env = append(env, demoKeys...)
	dir := t.TempDir() // the files the blocks write
	for _, b := range blocks {
		for _, ex := range b.examples {
			cmdline := strings.ReplaceAll(ex.command, "localhost:8080", addr)
			cmdline = strings.ReplaceAll(cmdline, "localhost:8081", keyedAddr)
			cmdline = strings.ReplaceAll(cmdline, "./bin/toolgate", "toolgate")
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			cmd := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", cmdline)
			cmd.Env, cmd.Dir = env, dir
			out, err := cmd.CombinedOutput()
			cancel()
			if err != nil {
				t.Errorf("%s:%d: %s\nfailed: %v\n%s", b.page, ex.line, ex.command, err, tail(out, 2000))
				continue
			}
			if missing := ex.check(string(out)); missing != "" {
				t.Errorf("%s:%d: %s\nthe output lacks %q (in the order the page shows):\n%s", b.page, ex.line, ex.command, missing, tail(out, 2000))
			}
		}
	}
}

// startKeyedDemo starts `toolgate demo --keys` on the database of the running demo and
// returns its address and the ADMIN_KEY=... and SEARCH_KEY=... lines it printed, once it is
// ready.
func startKeyedDemo(t *testing.T, dbURL string) (string, []string) {
	t.Helper()
	addr := freeAddr(t)
	keyed := exec.Command(os.Args[0], "demo", "--keys", "--listen", addr)
	keyed.Env = append(os.Environ(), runMainEnv+"=1", "DATABASE_URL="+dbURL, "TOOLGATE_LOG_LEVEL=warn",
		"TOOLGATE_CORS_ORIGINS=https://chat.example.com") // docs/auth.md#browser-clients
	stdout, err := keyed.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	keyed.Stderr = &logs
	if err := keyed.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = keyed.Process.Kill()
		_ = keyed.Wait()
		if t.Failed() {
			t.Logf("keyed demo log (tail):\n%s", tail(logs.Bytes(), 4000))
		}
	})
	var keys []string
	sc := bufio.NewScanner(stdout)
	for len(keys) < 2 && sc.Scan() {
		keys = append(keys, sc.Text())
	}
	if len(keys) < 2 || !strings.HasPrefix(keys[0], "ADMIN_KEY=") || !strings.HasPrefix(keys[1], "SEARCH_KEY=") {
		t.Fatalf("demo --keys printed %q (%v)", keys, sc.Err())
	}
	waitReady(t, "http://"+addr)
	return addr, keys
}

// docPages are README.md and every page under docs/, from the module root.
func docPages(t *testing.T) []string {
	t.Helper()
	root := filepath.Join("..", "..")
	pages := []string{filepath.Join(root, "README.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			pages = append(pages, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(pages[1:])
	return pages
}

// waitDemoEnriched waits until the demo catalog is fully embedded, so that searches give
// what the docs show (a bound on a hang, not a timing assertion).
func waitDemoEnriched(t *testing.T, base string) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(10 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		resp, err := http.Get(base + "/v1/sources/demo")
		if err != nil {
			last = err.Error()
			continue
		}
		var s struct {
			Tools    int64 `json:"tools"`
			Embedded int64 `json:"embedded"`
			Indexed  int64 `json:"indexed"`
		}
		err = json.NewDecoder(resp.Body).Decode(&s)
		resp.Body.Close()
		if err == nil && s.Tools > 0 && s.Embedded == s.Tools && s.Indexed == s.Tools {
			return
		}
		last = fmt.Sprintf("%d of %d tools embedded, %d indexed (%v)", s.Embedded, s.Tools, s.Indexed, err)
	}
	t.Fatalf("the demo catalog was not enriched in 10 minutes: %s", last)
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// docBlock is a runnable fenced block of a page.
type docBlock struct {
	page     string
	examples []docExample
}

// docExample is one command of a runnable block and the output lines shown under it.
// In a block, a command is a line that is not a comment (joined with its continuation
// lines, ending in `\`); the `# ` lines right after it, before any blank line, are its
// output: each must appear in the command's output, in that order, as part of a line;
// `# ...` stands for lines not shown. A comment after a blank line is only a comment.
type docExample struct {
	line    int
	command string
	want    []string
}

// check returns the first wanted line the output lacks, or "".
func (ex docExample) check(out string) string {
	lines := strings.Split(out, "\n")
	at := 0
	for _, w := range ex.want {
		if w == "..." {
			continue
		}
		for at < len(lines) && !strings.Contains(lines[at], w) {
			at++
		}
		if at == len(lines) {
			return w
		}
		at++
	}
	return ""
}

// runnableMark marks the fenced block on the next line as runnable.
const runnableMark = "<!-- runnable -->"

// parseRunnable returns the runnable blocks of a page.
func parseRunnable(page string, raw []byte) ([]docBlock, error) {
	var out []docBlock
	sc := bufio.NewScanner(bytes.NewReader(raw))
	n := 0
	next := func() (string, bool) {
		if !sc.Scan() {
			return "", false
		}
		n++
		return sc.Text(), true
	}
	for {
		line, ok := next()
		if !ok {
			return out, sc.Err()
		}
		if strings.TrimSpace(line) != runnableMark {
			continue
		}
		fence, ok := next()
		if !ok || !strings.HasPrefix(fence, "```") {
			return nil, fmt.Errorf("%s:%d: %s is not followed by a fenced block", page, n, runnableMark)
		}
		b := docBlock{page: page}
		var cur *docExample
		inOutput := false
		for {
			line, ok := next()
			if !ok {
				return nil, fmt.Errorf("%s:%d: runnable block not closed", page, n)
			}
			if strings.HasPrefix(line, "```") {
				break
			}
			trimmed := strings.TrimSpace(line)
			switch {
			case cur != nil && !inOutput && incomplete(cur.command):
				cur.command += "\n" + line // inside a quoted argument, blank and # lines too
				inOutput = !incomplete(cur.command)
			case trimmed == "":
				inOutput = false
			case strings.HasPrefix(trimmed, "#"):
				if inOutput {
					cur.want = append(cur.want, strings.TrimSpace(strings.TrimPrefix(trimmed, "#")))
				}
			default:
				b.examples = append(b.examples, docExample{line: n, command: line})
				cur = &b.examples[len(b.examples)-1]
				inOutput = !incomplete(line)
			}
		}
		if len(b.examples) == 0 {
			return nil, fmt.Errorf("%s:%d: runnable block without a command", page, n)
		}
		out = append(out, b)
	}
}

// incomplete reports whether bash would read more lines for cmd: it ends in a backslash or
// leaves a quote open.
func incomplete(cmd string) bool {
	var single, double bool
	for i := 0; i < len(cmd); i++ {
		switch c := cmd[i]; {
		case c == '\\' && !single:
			i++ // the next byte is escaped (a final backslash continues the line)
			if i >= len(cmd) {
				return true
			}
		case c == '\'' && !double:
			single = !single
		case c == '"' && !single:
			double = !double
		}
	}
	return single || double
}

func TestParseRunnable(t *testing.T) {
	t.Parallel()
	page := "Intro\n\n```sh\nnot runnable\n```\n\n" + runnableMark + "\n```sh\n" +
		"# a comment before any command\n" +
		"curl -s localhost:8080/readyz\n# {\"status\":\"ready\"}\n\n" +
		"# a comment after a blank line\n" +
		"curl -s localhost:8080/search \\\n  -d '{}' | jq '.results[].name'\n# \"a\"\n# ...\n# \"c\"\n" +
		"curl -d '{\n  \"k\": 3,\n\n  \"q\": \"x\"\n}'\n# 3\n" +
		"```\n"
	blocks, err := parseRunnable("p.md", []byte(page))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 1 || len(blocks[0].examples) != 3 {
		t.Fatalf("%+v", blocks)
	}
	first, second := blocks[0].examples[0], blocks[0].examples[1]
	if first.command != "curl -s localhost:8080/readyz" || !slices.Equal(first.want, []string{`{"status":"ready"}`}) || first.line != 10 {
		t.Errorf("first: %+v", first)
	}
	if second.command != "curl -s localhost:8080/search \\\n  -d '{}' | jq '.results[].name'" || !slices.Equal(second.want, []string{`"a"`, "...", `"c"`}) {
		t.Errorf("second: %+v", second)
	}
	if third := blocks[0].examples[2]; third.command != "curl -d '{\n  \"k\": 3,\n\n  \"q\": \"x\"\n}'" || !slices.Equal(third.want, []string{"3"}) {
		t.Errorf("third: %+v", third)
	}
	if m := second.check("\"a\"\n\"b\"\n\"c\"\n"); m != "" {
		t.Errorf("check of a matching output: missing %q", m)
	}
	if third := blocks[0].examples[2]; third.command != "curl -d '{\n  \"k\": 3,\n\n  \"q\": \"x\"\n}'" || !slices.Equal(third.want, []string{"3"}) {
		t.Errorf("third: %+v", third)
	}
	if m := second.check("\"c\"\n\"a\"\n"); m != `"c"` {
		t.Errorf("check of lines out of order: missing %q, want \"c\"", m)
	}
	for _, bad := range []string{runnableMark + "\ntext\n", runnableMark + "\n```sh\necho\n", runnableMark + "\n```sh\n# only a comment\n```\n"} {
		if _, err := parseRunnable("p.md", []byte(bad)); err == nil {
			t.Errorf("no error for %q", bad)
		}
	}
}
