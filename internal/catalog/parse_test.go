package catalog

import (
	"errors"
	"strings"
	"testing"
)

func TestParseFormats(t *testing.T) {
	input := strings.Join([]string{
		`{"name":"plain","description":"toolgate format","input_schema":{"type":"object","properties":{"q":{"type":"string"}}}}`,
		`{"type":"function","function":{"name":"openai_fn","description":"OpenAI tools format","parameters":{"type":"object"}}}`,
		`{"name":"openai_bare","description":"OpenAI function format","parameters":{"type":"object"}}`,
		`{"name":"mcp_tool","title":"MCP","description":"MCP format","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`,
		`{"tools":[{"name":"listed_a","inputSchema":{"type":"object"}},{"name":"listed_b"}]}`,
		``,
	}, "\n")
	tools, err := Parse(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	want := "plain openai_fn openai_bare mcp_tool listed_a listed_b"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("names = %q, want %q", got, want)
	}
	if string(tools[5].InputSchema) != `{"type":"object","properties":{}}` {
		t.Errorf("missing schema not defaulted: %s", tools[5].InputSchema)
	}
	if tools[3].Title != "MCP" || string(tools[3].Annotations) != `{"readOnlyHint":true}` {
		t.Errorf("MCP fields lost: %+v", tools[3])
	}
}

func TestParseSingleDocument(t *testing.T) {
	doc := "{\n  \"tools\": [\n    {\"name\": \"a\", \"inputSchema\": {\"type\": \"object\"}},\n    {\"name\": \"b\"}\n  ]\n}\n"
	tools, err := Parse(strings.NewReader(doc))
	if err != nil || len(tools) != 2 {
		t.Fatalf("got %d tools, err %v", len(tools), err)
	}
	tools, err = Parse(strings.NewReader(`[{"name":"x"},{"name":"y"},{"name":"z"}]`))
	if err != nil || len(tools) != 3 {
		t.Fatalf("array: got %d tools, err %v", len(tools), err)
	}
}

func TestParseRejectsWithLineNumbers(t *testing.T) {
	huge := strings.Repeat("x", MaxDescriptionLen+1)
	cases := []struct {
		name, input string
		line        int
		reason      string
	}{
		{"invalid JSON", `{"name":"ok"}` + "\n" + `{"name": nope}`, 2, "invalid JSON"},
		{"missing name", `{"description":"no name"}`, 1, "name is missing"},
		{"control character in name", `{"name":"has\ttab"}`, 1, "name contains a control character"},
		{"name too long", `{"name":"` + strings.Repeat("n", MaxOriginalNameLen+1) + `"}`, 1, "name is 513 bytes, limit 512"},
		{"schema not object", `{"name":"a","input_schema":[1,2]}`, 1, "input_schema must be a JSON object"},
		{"schema wrong type", `{"name":"a","input_schema":{"type":"string"}}`, 1, `input_schema.type must be "object"`},
		{"required not list", `{"name":"a","input_schema":{"type":"object","required":"x"}}`, 1, "required must be a list"},
		{"duplicate", `{"name":"a"}` + "\n" + `{"name":"b"}` + "\n" + `{"name":"a"}`, 3, "duplicate name, first defined on line 1"},
		{"huge description", `{"name":"a","description":"` + huge + `"}`, 1, "description is"},
		{"line too long", `{"name":"a","description":"` + strings.Repeat("y", MaxLineLen) + `"}` + "\n{\"name\":\"b\"}", 1, "line longer than"},
		{"empty", "\n\n", 1, "no tools"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(c.input))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want *ParseError", err)
			}
			p := pe.Problems[0]
			if p.Line != c.line || !strings.Contains(p.Reason, c.reason) {
				t.Fatalf("problem %+v, want line %d containing %q", p, c.line, c.reason)
			}
		})
	}
}

func TestParseReportsEveryProblem(t *testing.T) {
	_, err := Parse(strings.NewReader("{\"name\":\"a\"}\n{}\n{\"name\":\"a\"}\n[\n"))
	var pe *ParseError
	if !errors.As(err, &pe) || len(pe.Problems) != 3 {
		t.Fatalf("got %v, want 3 problems", err)
	}
}
