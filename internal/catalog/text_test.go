package catalog

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// A definition PostgreSQL could not store (a NUL, a \u0000 escape, an unpaired surrogate,
// invalid UTF-8) is refused by Validate with the field named, so that one bad tool never
// fails the write of the others.
func TestValidateRefusesWhatPostgreSQLCannotStore(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tool   Tool
		reason string
	}{
		{"NUL in description", Tool{Name: "a", Description: "bad\x00desc"}, "description contains a NUL character"},
		{"NUL in title", Tool{Name: "a", Title: "t\x00"}, "title contains a NUL character"},
		{"invalid UTF-8 in description", Tool{Name: "a", Description: "caf\xe9"}, "description is not valid UTF-8"},
		{"NUL in a schema key", Tool{Name: "a", InputSchema: json.RawMessage(`{"type":"object","properties":{"x\u0000y":{"type":"string"}}}`)}, `input_schema contains a NUL character (\u0000)`},
		{"NUL in a schema value", Tool{Name: "a", InputSchema: json.RawMessage(`{"type":"object","description":"\u0000"}`)}, "input_schema contains a NUL"},
		{"lone high surrogate", Tool{Name: "a", InputSchema: json.RawMessage(`{"type":"object","description":"\ud83d x"}`)}, `unpaired UTF-16 surrogate (\ud83d)`},
		{"lone low surrogate", Tool{Name: "a", OutputSchema: json.RawMessage(`{"description":"\ude00"}`)}, "output_schema contains an unpaired"},
		{"invalid UTF-8 in a schema key", Tool{Name: "a", InputSchema: json.RawMessage("{\"properties\":{\"caf\xe9\":{}}}")}, "input_schema is not valid UTF-8"},
		{"NUL in annotations", Tool{Name: "a", Annotations: json.RawMessage(`{"title":"\u0000"}`)}, "annotations contains a NUL"},
	} {
		var inv *InvalidToolError
		if err := tc.tool.Validate(); !errors.As(err, &inv) || inv.Name != "a" || !strings.Contains(inv.Reason, tc.reason) {
			t.Errorf("%s: got %v, want invalid tool \"a\": %s", tc.name, err, tc.reason)
		}
	}
	ok := Tool{Name: "a", Description: "emoji 😀 and a literal \\u0000",
		InputSchema: json.RawMessage(`{"type":"object","description":"pair \ud83d\ude00, escaped \\u0000, quote \" and \\\\","properties":{"é":{}}}`)}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid text refused: %v", err)
	}
}

// Invalid UTF-8 anywhere in a catalog line is refused by name, not replaced silently by
// decoding.
func TestParseNamesToolsWithBadText(t *testing.T) {
	input := "{\"name\":\"good\"}\n{\"name\":\"latin1\",\"description\":\"caf\xe9\"}\n{\"name\":\"nul\",\"description\":\"a\\u0000b\"}\n"
	_, err := Parse(strings.NewReader(input))
	var pe *ParseError
	if !errors.As(err, &pe) || len(pe.Problems) != 2 {
		t.Fatalf("got %v, want two problems", err)
	}
	for i, want := range []Problem{{Line: 2, Name: "latin1", Reason: "definition is not valid UTF-8"}, {Line: 3, Name: "nul", Reason: "description contains a NUL character"}} {
		if pe.Problems[i] != want {
			t.Errorf("problem %d = %+v, want %+v", i, pe.Problems[i], want)
		}
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "line 3 (nul): description contains a NUL character") {
		t.Errorf("error is not one line naming the tool: %q", msg)
	}
}
