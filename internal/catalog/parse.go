package catalog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/derrors"
	"github.com/toolgate/toolgate/internal/jsonl"
)

// Problem is one rejected entry of an imported catalog.
type Problem struct {
	Line   int    `json:"line"`
	Name   string `json:"name,omitempty"`
	Reason string `json:"reason"`
}

func (p Problem) String() string {
	if p.Name != "" {
		return fmt.Sprintf("line %d (%s): %s", p.Line, p.Name, p.Reason)
	}
	return fmt.Sprintf("line %d: %s", p.Line, p.Reason)
}

// ParseError lists every rejected entry of a catalog; a catalog with any problem is
// rejected as a whole.
type ParseError struct{ Problems []Problem }

func (e *ParseError) Error() string {
	const show = 5
	parts := make([]string, 0, show)
	for i, p := range e.Problems {
		if i == show {
			parts = append(parts, fmt.Sprintf("and %d more", len(e.Problems)-show))
			break
		}
		parts = append(parts, p.String())
	}
	return fmt.Sprintf("%d invalid catalog entries: %s", len(e.Problems), strings.Join(parts, "; "))
}

func (e *ParseError) Is(target error) bool { return target == derrors.Invalid }
func (e *ParseError) Code() string         { return "invalid_catalog" }

// Details are the problems, for the API's error body.
func (e *ParseError) Details() any { return e.Problems }

// MaxCatalogBytes bounds one imported catalog.
const MaxCatalogBytes = 64 << 20

// Parse reads a catalog: JSON lines, one tool per line, in toolgate's format
// {"name","description","input_schema"}, OpenAI's ({"type":"function","function":{...}} or
// {"name","description","parameters"}) or MCP's ({"name","description","inputSchema"}); a
// line may also hold a whole MCP tools/list result ({"tools":[...]}). A file that is a single
// JSON array, or a single (possibly pretty-printed) tools/list result, is read as one
// document. Every entry is validated; any problem, including a duplicate name, rejects the
// whole catalog with a *ParseError naming each bad line.
func Parse(r io.Reader) ([]Tool, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxCatalogBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxCatalogBytes {
		return nil, &ParseError{Problems: []Problem{{Line: 1, Reason: fmt.Sprintf("catalog exceeds %d bytes", MaxCatalogBytes)}}}
	}
	var (
		tools    []Tool
		problems []Problem
		lines    []int
	)
	add := func(line int, ts []Tool, err error) {
		if err != nil {
			p := Problem{Line: line, Reason: err.Error()}
			var inv *InvalidToolError
			if errors.As(err, &inv) {
				p.Name, p.Reason = inv.Name, inv.Reason
			}
			problems = append(problems, p)
			return
		}
		for _, t := range ts {
			tools = append(tools, t)
			lines = append(lines, line)
		}
	}
	if doc, ok := singleDocument(data); ok {
		ts, err := decodeEntry(doc)
		add(1, ts, err)
	} else {
		rd := jsonl.NewReader(bytes.NewReader(data), MaxLineLen)
		for {
			n, line, ok := rd.Next()
			if !ok {
				break
			}
			ts, err := decodeEntry(line)
			add(n, ts, err)
		}
		var le *jsonl.LineError
		if errors.As(rd.Err(), &le) {
			reason := le.Err.Error()
			if errors.Is(le.Err, bufio.ErrTooLong) {
				reason = fmt.Sprintf("line longer than %d bytes", MaxLineLen)
			}
			problems = append(problems, Problem{Line: le.Line, Reason: reason})
		}
	}
	seen := make(map[string]int, len(tools))
	// catalog name (CatalogName) → the first tool given it
	named := make(map[string]*Tool, len(tools))
	for i := range tools {
		t := &tools[i]
		if err := t.Validate(); err != nil {
			var inv *InvalidToolError
			reason := err.Error()
			if errors.As(err, &inv) {
				reason = inv.Reason
			}
			problems = append(problems, Problem{Line: lines[i], Name: t.Name, Reason: reason})
			continue
		}
		if first, dup := seen[t.Name]; dup {
			problems = append(problems, Problem{Line: lines[i], Name: t.Name, Reason: fmt.Sprintf("duplicate name, first defined on line %d", first)})
			continue
		}
		seen[t.Name] = lines[i]
		cn := CatalogName(t.Name)
		if other := named[cn]; other != nil {
			problems = append(problems, Problem{Line: lines[i], Name: t.Name, Reason: fmt.Sprintf(
				"its catalog name %q is also that of %q, line %d; rename one", cn, other.Name, seen[other.Name])})
			continue
		}
		named[cn] = t
	}
	if len(problems) > 0 {
		return nil, &ParseError{Problems: problems}
	}
	if len(tools) == 0 {
		return nil, &ParseError{Problems: []Problem{{Line: 1, Reason: "catalog holds no tools"}}}
	}
	return tools, nil
}

// singleDocument reports whether data is one JSON array or one object spanning several lines.
func singleDocument(data []byte) (json.RawMessage, bool) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, false
	}
	if trimmed[0] != '[' && !(trimmed[0] == '{' && bytes.IndexByte(trimmed, '\n') >= 0) {
		return nil, false
	}
	if !json.Valid(trimmed) {
		return nil, false
	}
	return trimmed, true
}

// entry is the union of the supported per-tool formats.
type entry struct {
	Type         string            `json:"type"`
	Function     *entry            `json:"function"`
	Name         *string           `json:"name"`
	Title        string            `json:"title"`
	Description  string            `json:"description"`
	InputSchema  json.RawMessage   `json:"input_schema"`
	InputSchemaM json.RawMessage   `json:"inputSchema"`
	Parameters   json.RawMessage   `json:"parameters"`
	OutputSchema json.RawMessage   `json:"output_schema"`
	OutputSchemM json.RawMessage   `json:"outputSchema"`
	Annotations  json.RawMessage   `json:"annotations"`
	Tools        []json.RawMessage `json:"tools"`
	Result       *entry            `json:"result"`
}

func decodeEntry(raw json.RawMessage) ([]Tool, error) {
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, fmt.Errorf("invalid JSON: %v", err)
		}
		var out []Tool
		for _, it := range items {
			ts, err := decodeEntry(it)
			if err != nil {
				return nil, err
			}
			out = append(out, ts...)
		}
		return out, nil
	}
	var e entry
	if err := json.Unmarshal(raw, &e); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, fmt.Errorf("invalid JSON at byte %d: %v", syn.Offset, err)
		}
		return nil, fmt.Errorf("not a tool definition: %v", err)
	}
	switch {
	case e.Result != nil && e.Result.Tools != nil: // JSON-RPC response of tools/list
		e = *e.Result
		fallthrough
	case e.Tools != nil && e.Name == nil: // tools/list result
		var out []Tool
		for _, it := range e.Tools {
			ts, err := decodeEntry(it)
			if err != nil {
				return nil, err
			}
			out = append(out, ts...)
		}
		return out, nil
	case e.Function != nil: // OpenAI {"type":"function","function":{...}}
		e = *e.Function
	}
	// Decoding replaced invalid UTF-8 in the strings with U+FFFD; the definition is refused
	// rather than silently altered (json.RawMessage fields would keep the bytes as they are).
	if e.Name != nil && !utf8.Valid(raw) {
		return nil, &InvalidToolError{Name: *e.Name, Reason: "definition is not valid UTF-8"}
	}
	return decodeEntryValue(e)
}

func decodeEntryValue(e entry) ([]Tool, error) {
	if e.Name == nil {
		return nil, &InvalidToolError{Reason: "name is missing"}
	}
	t := Tool{Name: *e.Name, Title: e.Title, Description: e.Description, Annotations: e.Annotations}
	t.InputSchema = firstNonEmpty(e.InputSchema, e.InputSchemaM, e.Parameters)
	t.OutputSchema = firstNonEmpty(e.OutputSchema, e.OutputSchemM)
	return []Tool{t}, nil
}

func firstNonEmpty(raws ...json.RawMessage) json.RawMessage {
	for _, r := range raws {
		if len(r) > 0 {
			return r
		}
	}
	return nil
}
