package eval

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/jsonl"
)

// File names of a dataset directory.
const (
	ToolsFile   = "tools.jsonl"
	QueriesFile = "queries.jsonl"
)

// Query is one line of queries.jsonl: a question and the names of the tools that answer it.
type Query struct {
	ID    string   `json:"id"`
	Query string   `json:"query"`
	Gold  []string `json:"gold"`
	Kind  string   `json:"kind,omitempty"`
}

// Dataset is a tool catalog and a query set labelled against it.
type Dataset struct {
	Tools   []catalog.Tool
	Queries []Query
	// Info identifies the files the dataset was loaded from (zero for a dataset made in code).
	Info DatasetInfo
}

// DatasetInfo identifies a dataset in a report: where it was read from, its size, and
// content hashes, so that results of different datasets (or of a dataset that changed since)
// are never mistaken for each other.
type DatasetInfo struct {
	Path    string `json:"path"`
	Tools   int    `json:"tools"`
	Queries int    `json:"queries"` // in queries.jsonl; a run may use fewer (its n_queries)
	// SHA256 is the hash of both files, each framed by its name and length (see Hash): equal
	// hashes mean the same tools and the same queries, byte for byte.
	SHA256        string `json:"sha256"`
	ToolsSHA256   string `json:"tools_sha256"`
	QueriesSHA256 string `json:"queries_sha256"`
}

// Hash is the content hash of a dataset from the contents of its two files:
// SHA-256 over, for tools.jsonl then queries.jsonl, the file name, a NUL, the length in
// decimal, a NUL and the bytes. The framing keeps bytes moved from one file to the other
// from giving the same hash.
func Hash(tools, queries []byte) string {
	h := sha256.New()
	for _, f := range []struct {
		name string
		data []byte
	}{{ToolsFile, tools}, {QueriesFile, queries}} {
		fmt.Fprintf(h, "%s\x00%d\x00", f.name, len(f.data))
		h.Write(f.data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Problem is one rejected line of queries.jsonl.
type Problem struct {
	Line   int    `json:"line"`
	ID     string `json:"id,omitempty"`
	Reason string `json:"reason"`
}

func (p Problem) String() string {
	if p.ID != "" {
		return fmt.Sprintf("line %d (%s): %s", p.Line, p.ID, p.Reason)
	}
	return fmt.Sprintf("line %d: %s", p.Line, p.Reason)
}

// DatasetError lists every problem of a dataset file; a file with any problem is rejected.
type DatasetError struct {
	File     string
	Problems []Problem
}

func (e *DatasetError) Error() string {
	const show = 5
	parts := make([]string, 0, show+1)
	for i, p := range e.Problems {
		if i == show {
			parts = append(parts, fmt.Sprintf("and %d more", len(e.Problems)-show))
			break
		}
		parts = append(parts, p.String())
	}
	return fmt.Sprintf("%s: %d invalid queries: %s", e.File, len(e.Problems), strings.Join(parts, "; "))
}

// Load reads a dataset directory: tools.jsonl in any format catalog.Parse accepts and
// queries.jsonl. Every query needs a unique id, a non-empty query and a non-empty gold list
// whose names all appear in tools.jsonl; all problems are reported together, by line.
// The dataset's Info records dir, the counts and the content hashes of the bytes read.
func Load(dir string) (*Dataset, error) {
	toolsPath, queriesPath := filepath.Join(dir, ToolsFile), filepath.Join(dir, QueriesFile)
	// Both files are read whole: they are hashed and parsed from the same bytes, so the
	// hash always describes what was evaluated.
	rawTools, err := os.ReadFile(toolsPath)
	if err != nil {
		return nil, err
	}
	tools, err := catalog.Parse(bytes.NewReader(rawTools))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", toolsPath, err)
	}
	rawQueries, err := os.ReadFile(queriesPath)
	if err != nil {
		return nil, err
	}
	queries, err := ParseQueries(bytes.NewReader(rawQueries), tools)
	if err != nil {
		var de *DatasetError
		if errors.As(err, &de) {
			de.File = queriesPath
		}
		return nil, err
	}
	toolsSum, queriesSum := sha256.Sum256(rawTools), sha256.Sum256(rawQueries)
	return &Dataset{Tools: tools, Queries: queries, Info: DatasetInfo{
		Path: dir, Tools: len(tools), Queries: len(queries),
		SHA256:      Hash(rawTools, rawQueries),
		ToolsSHA256: hex.EncodeToString(toolsSum[:]), QueriesSHA256: hex.EncodeToString(queriesSum[:]),
	}}, nil
}

// ParseQueries reads queries.jsonl and checks each line against the catalog tools.
func ParseQueries(r io.Reader, tools []catalog.Tool) ([]Query, error) {
	known := make(map[string]bool, len(tools))
	for _, t := range tools {
		known[t.Name] = true
	}
	var (
		out      []Query
		problems []Problem
		ids      = map[string]int{}
	)
	rd := jsonl.NewReader(r, catalog.MaxLineLen)
	for {
		line, raw, ok := rd.Next()
		if !ok {
			break
		}
		var q Query
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&q); err != nil {
			problems = append(problems, Problem{Line: line, Reason: "invalid JSON: " + err.Error()})
			continue
		}
		bad := func(reason string) { problems = append(problems, Problem{Line: line, ID: q.ID, Reason: reason}) }
		switch {
		case q.ID == "":
			bad("missing id")
		case ids[q.ID] != 0:
			bad(fmt.Sprintf("duplicate id (first on line %d)", ids[q.ID]))
		case strings.TrimSpace(q.Query) == "":
			bad("empty query")
		case len(q.Gold) == 0:
			bad("empty gold list")
		default:
			var missing []string
			for _, g := range q.Gold {
				if !known[g] {
					missing = append(missing, g)
				}
			}
			if len(missing) > 0 {
				bad("gold tools not in " + ToolsFile + ": " + strings.Join(missing, ", "))
				break
			}
			ids[q.ID] = line
			out = append(out, q)
		}
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, &DatasetError{File: QueriesFile, Problems: problems}
	}
	if len(out) == 0 {
		return nil, &DatasetError{File: QueriesFile, Problems: []Problem{{Line: rd.Line(), Reason: "no queries"}}}
	}
	return out, nil
}

// Write stores a dataset in dir (created if needed) as tools.jsonl and queries.jsonl, one
// JSON object per line, in a stable byte-for-byte form.
func Write(dir string, ds *Dataset) error {
	if err := WriteTools(dir, ds.Tools); err != nil {
		return err
	}
	var qb bytes.Buffer
	for _, q := range ds.Queries {
		if err := writeLine(&qb, q); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, QueriesFile), qb.Bytes(), 0o644)
}

// WriteTools stores tools in dir (created if needed) as tools.jsonl, one
// {"name","title","description","input_schema"} object per line (title only when set), in
// the order given. queries.jsonl is left as it is: a catalog may be rebuilt under a query
// set written by hand.
func WriteTools(dir string, tools []catalog.Tool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var tb bytes.Buffer
	for _, t := range tools {
		if err := writeLine(&tb, struct {
			Name        string          `json:"name"`
			Title       string          `json:"title,omitempty"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		}{t.Name, t.Title, t.Description, t.InputSchema}); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, ToolsFile), tb.Bytes(), 0o644)
}

func writeLine(buf *bytes.Buffer, v any) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
