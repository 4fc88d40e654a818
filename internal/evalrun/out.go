package evalrun

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/eval"
)

// Line is one configuration's result as `toolgate eval` writes it, one JSON object per
// line of --out (and per element of --json): the run it belongs to, the configuration's
// label, and its report (metrics, config, dataset).
type Line struct {
	Run   *RunInfo `json:"run"`
	Label string   `json:"label"`
	eval.Report
}

// RunInfo identifies one invocation of `toolgate eval`: every line it writes carries it.
type RunInfo struct {
	ID        string    `json:"id"`
	StartedAt time.Time `json:"started_at"`
	Args      []string  `json:"args"`
	Toolgate  buildInfo `json:"toolgate"`
}

func newRunInfo(ctx context.Context, args []string) *RunInfo {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return &RunInfo{ID: hex.EncodeToString(b), StartedAt: time.Now().UTC().Truncate(time.Second),
		Args: append([]string{}, args...), Toolgate: toolgateBuild(ctx)}
}

// buildInfo is the toolgate that ran.
type buildInfo struct {
	Version string `json:"version"` // the module version; "(devel)" for a build from source
	Go      string `json:"go"`
	// Commit is the VCS revision `go build` stamped into the binary, or, for `go run` and
	// tests (which stamp none), HEAD of the git checkout of toolgate in the working
	// directory; empty when neither is known.
	Commit string `json:"commit,omitempty"`
	// Modified says the build had uncommitted changes (tracked files only).
	Modified *bool `json:"modified,omitempty"`
}

func toolgateBuild(ctx context.Context) buildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return buildInfo{Version: "unknown"}
	}
	out := buildInfo{Version: bi.Main.Version, Go: bi.GoVersion}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			out.Commit = s.Value
		case "vcs.modified":
			m := s.Value == "true"
			out.Modified = &m
		}
	}
	if out.Commit == "" {
		out.Commit, out.Modified = gitHead(ctx, bi.Main.Path)
	}
	return out
}

// gitHead is HEAD of the git checkout around the working directory, and whether its tracked
// files have changes, when that checkout is the module module (so that running an installed
// binary in some other repository does not record that repository's commit).
func gitHead(ctx context.Context, module string) (string, *bool) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	git := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, "git", args...).Output()
		return strings.TrimSpace(string(out)), err
	}
	top, err := git("rev-parse", "--show-toplevel")
	if err != nil || module == "" {
		return "", nil
	}
	mod, err := os.ReadFile(filepath.Join(top, "go.mod"))
	if err != nil || !bytes.HasPrefix(mod, []byte("module "+module+"\n")) {
		return "", nil
	}
	head, err := git("rev-parse", "HEAD")
	if err != nil {
		return "", nil
	}
	status, err := git("status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return head, nil
	}
	modified := status != ""
	return head, &modified
}

// OutFileError is an --out file that cannot take this run's results: it holds lines that
// are not eval reports, or reports of another dataset.
type OutFileError struct {
	File   string
	Line   int
	Reason string
}

func (e *OutFileError) Error() string {
	return fmt.Sprintf("--out %s: line %d %s; write to another file", e.File, e.Line, e.Reason)
}

// evalOut is the --out file: one JSON line per finished configuration, appended and synced
// at once, so that an interrupted run keeps every configuration it finished.
type evalOut struct {
	f *os.File
}

// openEvalOut opens path for appending, after checking that every line already in it is a
// complete report of the same dataset (same content hash): a file accumulates the runs of
// one dataset, told apart by their run id, and never mixes datasets.
func openEvalOut(path string, ds eval.DatasetInfo) (*evalOut, error) {
	if err := checkEvalOut(path, ds); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	return &evalOut{f: f}, nil
}

func checkEvalOut(path string, ds eval.DatasetInfo) error {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64<<10), catalog.MaxLineLen)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var prev struct {
			Run     *RunInfo          `json:"run"`
			Dataset *eval.DatasetInfo `json:"dataset"`
		}
		if err := json.Unmarshal(line, &prev); err != nil || prev.Run == nil || prev.Dataset == nil {
			return &OutFileError{File: path, Line: n, Reason: "is not a toolgate eval report"}
		}
		if prev.Dataset.SHA256 != ds.SHA256 {
			return &OutFileError{File: path, Line: n, Reason: fmt.Sprintf(
				"holds results of another dataset (%s, sha256 %.12s) than %s (sha256 %.12s)",
				prev.Dataset.Path, prev.Dataset.SHA256, ds.Path, ds.SHA256)}
		}
	}
	if err := sc.Err(); err != nil {
		return &OutFileError{File: path, Line: n + 1, Reason: "cannot be read: " + err.Error()}
	}
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		// only a write cut short leaves a line without its newline: appending would glue
		// the next report to it
		return &OutFileError{File: path, Line: n, Reason: "is incomplete (no final newline)"}
	}
	return nil
}

// jsonLine is v as one line of JSON, newline included, with <, > and & as they are.
func jsonLine(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return b.Bytes(), err
}

// write appends l as one line, in one write, and syncs the file.
func (o *evalOut) write(l Line) error {
	line, err := jsonLine(l)
	if err != nil {
		return err
	}
	if _, err := o.f.Write(line); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if err := o.f.Sync(); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	return nil
}

func (o *evalOut) Close() error {
	if o == nil {
		return nil
	}
	return o.f.Close()
}

// perQueryOut is the --per-query file: one JSON line per query and configuration, with the
// query's ranked results and the rank of each gold tool, so that a reader can see which
// queries fail and why. It is written anew by each run, a line at a time, so an
// interrupted run keeps the queries it scored.
type perQueryOut struct {
	f *os.File
}

func createPerQueryOut(path string) (*perQueryOut, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--per-query: %w", err)
	}
	return &perQueryOut{f: f}, nil
}

// PerQueryLine is one line of the --per-query file.
type PerQueryLine struct {
	Run    string `json:"run"`
	Config string `json:"config"`
	eval.QueryOutcome
}

// writer is the eval.Options.PerQuery of one configuration; nil without --per-query.
func (o *perQueryOut) writer(run, config string) func(eval.QueryOutcome) error {
	if o == nil {
		return nil
	}
	return func(q eval.QueryOutcome) error {
		line, err := jsonLine(PerQueryLine{Run: run, Config: config, QueryOutcome: q})
		if err != nil {
			return err
		}
		if _, err := o.f.Write(line); err != nil {
			return fmt.Errorf("--per-query: %w", err)
		}
		return nil
	}
}

func (o *perQueryOut) Close() error {
	if o == nil {
		return nil
	}
	return o.f.Close()
}
