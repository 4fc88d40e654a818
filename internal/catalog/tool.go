// Package catalog is toolgate's tool model: parsing and validating tool definitions from
// the formats in use (toolgate JSON lines, OpenAI function calling, MCP tools/list), the
// canonical content hash of a definition, and applying a source's tool list to the stored
// catalog as a hash diff (ScaleMCP Algorithm 1).
package catalog

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/derrors"
)

// Limits on a single tool definition. A description of 32 KiB is several thousand tokens,
// far beyond any useful tool description; the limits protect the index and the agents'
// context windows, not the database.
const (
	// MaxNameLen bounds a catalog name (see CatalogName), not the name a server gives its
	// tool, which is bounded by MaxOriginalNameLen.
	MaxNameLen         = 128
	MaxOriginalNameLen = 512
	MaxDescriptionLen  = 32 << 10
	MaxSchemaLen       = 256 << 10
	MaxLineLen         = 1 << 20
	// NamespaceSep joins a source name and a tool's catalog name.
	NamespaceSep = "__"
)

var (
	toolNameRE   = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)
	sourceNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)
)

// Tool is one tool definition as a source serves it.
type Tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	// Refused, when set, is why the definition could not be read from its server, which
	// gave only the name: Validate refuses the tool with it, so that a sync skips and
	// reports the tool and keeps its stored definition.
	Refused string `json:"-"`
}

// InvalidToolError says why a tool definition was rejected.
type InvalidToolError struct {
	Name   string
	Reason string
}

func (e *InvalidToolError) Error() string {
	if e.Name == "" {
		return "invalid tool: " + e.Reason
	}
	return fmt.Sprintf("invalid tool %q: %s", e.Name, e.Reason)
}

func (e *InvalidToolError) Is(target error) bool { return target == derrors.Invalid }
func (e *InvalidToolError) Code() string         { return "invalid_tool" }

// ToolNotFoundError is a tool name with no stored tool.
type ToolNotFoundError struct{ Name string }

func (e *ToolNotFoundError) Error() string        { return fmt.Sprintf("no tool named %q", e.Name) }
func (e *ToolNotFoundError) Is(target error) bool { return target == derrors.NotFound }

// ValidSourceName reports whether name may name a source: lowercase letters, digits and
// '-', at most 32 characters. No underscore, so `source__tool` splits unambiguously.
func ValidSourceName(name string) bool { return sourceNameRE.MatchString(name) }

// Namespaced joins a source name and a catalog name (CatalogName) of one of its tools.
func Namespaced(source, tool string) string { return source + NamespaceSep + tool }

// ToolName is the catalog-wide name of a source's tool called original by its server.
func ToolName(source, original string) string { return Namespaced(source, CatalogName(original)) }

// CatalogName is the name under which a tool whose server calls it original is cataloged
// (after its source's namespace) and searched, and which agents call it by; toolgate calls
// the server by the original name. A name of 1-128 characters of A-Z a-z 0-9 _ . - is kept
// as it is. Any other (a space, "&", a letter outside ASCII, more than 128 characters) is
// mapped deterministically: each run of other characters becomes "_", the result is cut to
// 119 bytes, and "-" and the first 8 hex digits of the SHA-256 of the original name are
// appended ("PDF&URLTool" → "PDF_URLTool-<8 hex>"). The hash keeps two originals that
// differ only in replaced characters apart; the name depends on the original alone, so it is
// the same at every sync. Apply settles the rare clash that remains (a verbatim name equal
// to another's mapped one).
func CatalogName(original string) string {
	if toolNameRE.MatchString(original) {
		return original
	}
	var b strings.Builder
	inRun := false
	for _, r := range original {
		if nameChar(r) {
			b.WriteRune(r)
			inRun = false
			continue
		}
		if !inRun {
			b.WriteByte('_')
		}
		inRun = true
	}
	const keep = MaxNameLen - 1 - 8
	name := b.String()
	if len(name) > keep {
		name = name[:keep]
	}
	return name + "-" + nameHash(original)
}

// nameChar reports whether r may appear in a catalog name: A-Z a-z 0-9 _ . -
func nameChar(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '.' || r == '-'
}

// SplitNamespaced splits a catalog-wide name into source and catalog name.
func SplitNamespaced(name string) (source, tool string, ok bool) {
	return strings.Cut(name, NamespaceSep)
}

// ReportName is how a report that is stored (a sync's skipped list) shows the name a
// server gave a tool: as it is when it is valid UTF-8 without control characters and at
// most MaxOriginalNameLen bytes, else Go-quoted (`"nul\x00name"`: a NUL, invalid bytes and
// controls escaped) and cut after MaxOriginalNameLen bytes of the name with "…". A name
// PostgreSQL cannot store would otherwise fail the very record that reports it.
func ReportName(name string) string {
	if len(name) <= MaxOriginalNameLen && utf8.ValidString(name) && !strings.ContainsFunc(name, unicode.IsControl) {
		return name
	}
	if len(name) > MaxOriginalNameLen {
		return strconv.Quote(name[:MaxOriginalNameLen]) + "…"
	}
	return strconv.Quote(name)
}

// Validate checks a definition and normalizes it in place: a missing input schema
// becomes an empty object schema.
func (t *Tool) Validate() error {
	bad := func(format string, args ...any) error {
		return &InvalidToolError{Name: t.Name, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case t.Refused != "":
		return bad("%s", t.Refused)
	case t.Name == "":
		return bad("name is missing")
	case len(t.Name) > MaxOriginalNameLen:
		return bad("name is %d bytes, limit %d", len(t.Name), MaxOriginalNameLen)
	case strings.ContainsFunc(t.Name, func(r rune) bool { return r != 0 && unicode.IsControl(r) }):
		// Tab or newline in a name would break every one-line rendering of it (logs,
		// `toolgate sync` output, error messages); NUL is checked with the other text.
		return bad("name contains a control character")
	case len(t.Description) > MaxDescriptionLen:
		return bad("description is %d bytes, limit %d", len(t.Description), MaxDescriptionLen)
	case len(t.Title) > 1024:
		return bad("title is %d bytes, limit 1024", len(t.Title))
	}
	for _, f := range []struct{ name, value string }{{"name", t.Name}, {"title", t.Title}, {"description", t.Description}} {
		if err := checkText(f.name, f.value); err != nil {
			return bad("%v", err)
		}
	}
	if len(t.InputSchema) == 0 || string(t.InputSchema) == "null" {
		t.InputSchema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	if err := checkSchema(t.InputSchema, "input_schema"); err != nil {
		return bad("%v", err)
	}
	if len(t.OutputSchema) > 0 && string(t.OutputSchema) != "null" {
		if err := checkSchema(t.OutputSchema, "output_schema"); err != nil {
			return bad("%v", err)
		}
	} else {
		t.OutputSchema = nil
	}
	if len(t.Annotations) > 0 && string(t.Annotations) != "null" {
		var a map[string]any
		if err := json.Unmarshal(t.Annotations, &a); err != nil {
			return bad("annotations must be a JSON object")
		}
	} else {
		t.Annotations = nil
	}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
	}{{"input_schema", t.InputSchema}, {"output_schema", t.OutputSchema}, {"annotations", t.Annotations}} {
		if err := checkJSONText(f.name, f.raw); err != nil {
			return bad("%v", err)
		}
	}
	return nil
}

// checkSchema accepts a JSON Schema for tool arguments: an object whose type, when given,
// is "object", whose properties is an object of objects and whose required is a list of
// strings.
func checkSchema(raw json.RawMessage, field string) error {
	if len(raw) > MaxSchemaLen {
		return fmt.Errorf("%s is %d bytes, limit %d", field, len(raw), MaxSchemaLen)
	}
	var s map[string]json.RawMessage
	if err := json.Unmarshal(raw, &s); err != nil || s == nil {
		return fmt.Errorf("%s must be a JSON object", field)
	}
	if t, ok := s["type"]; ok {
		var typ string
		if err := json.Unmarshal(t, &typ); err != nil || typ != "object" {
			return fmt.Errorf(`%s.type must be "object"`, field)
		}
	}
	if p, ok := s["properties"]; ok {
		var props map[string]json.RawMessage
		if err := json.Unmarshal(p, &props); err != nil {
			return fmt.Errorf("%s.properties must be an object", field)
		}
		for name, def := range props {
			var d map[string]any
			if err := json.Unmarshal(def, &d); err != nil {
				return fmt.Errorf("%s.properties.%s must be an object", field, name)
			}
		}
	}
	if r, ok := s["required"]; ok {
		var req []string
		if err := json.Unmarshal(r, &req); err != nil {
			return fmt.Errorf("%s.required must be a list of strings", field)
		}
	}
	return nil
}
