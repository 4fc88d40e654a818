package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"testing"
)

// Seeds shared by the fuzz targets: each supported format, and some near misses.
var catalogSeeds = []string{
	`{"name":"get_weather","description":"Weather for a city","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}`,
	`{"type":"function","function":{"name":"lookup","description":"d","parameters":{"type":"object","properties":{}}}}`,
	`{"name":"mcp_tool","description":"x","inputSchema":{"type":"object"},"outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`,
	`{"tools":[{"name":"a","inputSchema":{}},{"name":"b","description":"B"}]}`,
	`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"c","inputSchema":{"type":"object"}}]}}`,
	"[{\"name\":\"x\"},\n{\"name\":\"y\",\"parameters\":null}]",
	"{\n  \"tools\": [\n    {\"name\": \"pretty\", \"description\": \"\\u00e9t\\u00e9 <b>\"}\n  ]\n}",
	"{\"name\":\"dup\"}\n{\"name\":\"dup\"}",
	`{"name":"bad name!"}`,
	`{"name":"n","input_schema":{"type":"string"}}`,
	`{"name":"n","input_schema":{"properties":{"a":1}}}`,
	`{"name":"n","input_schema":{"required":"a"}}`,
	`{"name":"n","input_schema":{"type":"object","properties":{"big":{"type":"number","maximum":1e400,"default":0.10}}}}`,
	`[[{"name":"nested"}]]`,
	"not json at all\n{\"name\":",
	"",
}

// FuzzParse: Parse never panics; it either rejects the catalog with a *ParseError
// naming at least one problem, or returns valid tools with unique names that survive a
// round trip through toolgate's own JSON-lines format with unchanged hashes.
func FuzzParse(f *testing.F) {
	for _, s := range catalogSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tools, err := Parse(bytes.NewReader(data))
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || len(pe.Problems) == 0 {
				t.Fatalf("error %v is not a *ParseError with problems", err)
			}
			for _, p := range pe.Problems {
				if p.Line < 1 || p.Reason == "" {
					t.Fatalf("problem %+v lacks a line or a reason", p)
				}
			}
			return
		}
		if len(tools) == 0 {
			t.Fatal("no error and no tools")
		}
		var jsonl bytes.Buffer
		names := map[string]bool{}
		for _, tool := range tools {
			if names[tool.Name] {
				t.Fatalf("duplicate name %q accepted", tool.Name)
			}
			names[tool.Name] = true
			again := tool
			if err := again.Validate(); err != nil {
				t.Fatalf("parsed tool %q does not validate again: %v", tool.Name, err)
			}
			if again.Hash() != tool.Hash() {
				t.Fatalf("validating %q again changed its hash", tool.Name)
			}
			line, err := json.Marshal(tool)
			if err != nil {
				t.Fatalf("marshal %q: %v", tool.Name, err)
			}
			jsonl.Write(line)
			jsonl.WriteByte('\n')
		}
		round, err := Parse(&jsonl)
		if err != nil {
			t.Fatalf("re-parsing the tools as JSON lines: %v\n%s", err, jsonl.String())
		}
		if len(round) != len(tools) {
			t.Fatalf("round trip: %d tools, want %d", len(round), len(tools))
		}
		for i := range tools {
			if round[i].Hash() != tools[i].Hash() {
				t.Fatalf("round trip changed the hash of %q", tools[i].Name)
			}
		}
	})
}

// FuzzValidate: Validate never panics, rejects with an *InvalidToolError, and a tool it
// accepts has an object input schema, validates again unchanged (idempotent
// normalization) and hashes the same.
func FuzzValidate(f *testing.F) {
	f.Add("get_weather", "Weather", []byte(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`), []byte(`{"readOnlyHint":true}`))
	f.Add("t", "", []byte(``), []byte(`null`))
	f.Add("t", "", []byte(`null`), []byte(``))
	f.Add("t.x-y", "d", []byte(`{"type":"array"}`), []byte(`[]`))
	f.Add("t", "d", []byte(`{"properties":[]}`), []byte(`{}`))
	f.Add("t", "d", []byte(`{"required":[1]}`), []byte(`1`))
	f.Add("", "d", []byte(`{}`), []byte(``))
	f.Add("t", "d", []byte(`{} {}`), []byte(``))
	f.Fuzz(func(t *testing.T, name, desc string, schema, annotations []byte) {
		tool := Tool{Name: name, Description: desc, InputSchema: schema, Annotations: annotations}
		if err := tool.Validate(); err != nil {
			var inv *InvalidToolError
			if !errors.As(err, &inv) || inv.Reason == "" {
				t.Fatalf("error %v is not an *InvalidToolError with a reason", err)
			}
			return
		}
		var obj map[string]any
		if err := json.Unmarshal(tool.InputSchema, &obj); err != nil || obj == nil {
			t.Fatalf("accepted input schema %q is not an object", tool.InputSchema)
		}
		h := tool.Hash()
		again := tool
		if err := again.Validate(); err != nil {
			t.Fatalf("accepted tool does not validate again: %v", err)
		}
		if again.Hash() != h || !bytes.Equal(again.InputSchema, tool.InputSchema) {
			t.Fatal("validating again changed the tool")
		}
	})
}

// FuzzCanonical: Canonical is idempotent, its output is valid JSON equal in content to
// the input, and neither key order nor formatting of the input changes it.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{
		`{"b":1,"a":[true,false,null,"x"],"c":{"z":1.50,"y":-0}}`,
		`{"a":"<tag>&\u2028","a":"dup"}`,
		`[1e400, 0.1, 12345678901234567890]`,
		`"just a string"`,
		`   `,
		`{"\ud800":"lone surrogate"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, err := Canonical(raw)
		if err != nil {
			return
		}
		if !json.Valid(raw) {
			t.Fatalf("Canonical accepted %q, which is not one JSON document", raw)
		}
		if !json.Valid(out) {
			t.Fatalf("Canonical(%q) = %q, not valid JSON", raw, out)
		}
		again, err := Canonical(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %q then %q (%v)", out, again, err)
		}
		v := decodeNumbers(t, out)
		for _, variant := range [][]byte{reversedKeys(v), indented(t, out)} {
			got, err := Canonical(variant)
			if err != nil || !bytes.Equal(got, out) {
				t.Fatalf("Canonical(%q) = %q (%v), want %q", variant, got, err, out)
			}
		}
	})
}

// FuzzHash: a tool's hash does not depend on the key order or formatting of its schemas
// and annotations, and changes when its description changes.
func FuzzHash(f *testing.F) {
	f.Add("t", "d", []byte(`{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"integer"}}}`), []byte(`{"z":1,"a":2}`))
	f.Add("t", "", []byte(`{}`), []byte(``))
	f.Fuzz(func(t *testing.T, name, desc string, schema, annotations []byte) {
		tool := Tool{Name: name, Description: desc, InputSchema: schema, Annotations: annotations}
		if tool.Validate() != nil {
			return
		}
		h := tool.Hash()
		if len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" {
			t.Fatalf("hash %q is not hex SHA-256", h)
		}
		other := tool
		other.InputSchema = reversedKeys(decodeNumbers(t, tool.InputSchema))
		if len(tool.Annotations) > 0 {
			other.Annotations = indented(t, tool.Annotations)
		}
		if other.Hash() != h {
			t.Fatalf("reordering keys changed the hash: %s vs %s", tool.InputSchema, other.InputSchema)
		}
		other.Description += "!"
		if other.Hash() == h {
			t.Fatal("changing the description kept the hash")
		}
	})
}

func decodeNumbers(t *testing.T, raw []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", raw, err)
	}
	return v
}

func indented(t *testing.T, raw []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "\t"); err != nil {
		t.Fatalf("indent %q: %v", raw, err)
	}
	return buf.Bytes()
}

// reversedKeys encodes v with every object's keys in reverse sorted order, with
// encoding/json's escaping (which differs from Canonical's: it escapes < > &).
func reversedKeys(v any) []byte {
	var buf bytes.Buffer
	var enc func(any)
	enc = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Sort(sort.Reverse(sort.StringSlice(keys)))
			buf.WriteString("{ ")
			for i, k := range keys {
				if i > 0 {
					buf.WriteString(" , ")
				}
				kb, _ := json.Marshal(k)
				buf.Write(kb)
				buf.WriteString(" : ")
				enc(x[k])
			}
			buf.WriteString("}")
		case []any:
			buf.WriteString("[")
			for i, e := range x {
				if i > 0 {
					buf.WriteString(",")
				}
				enc(e)
			}
			buf.WriteString("]")
		default:
			b, _ := json.Marshal(x)
			buf.Write(b)
		}
	}
	enc(v)
	return buf.Bytes()
}
