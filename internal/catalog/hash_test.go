package catalog

import (
	"encoding/json"
	"testing"
)

func TestHashIgnoresKeyOrderAndWhitespace(t *testing.T) {
	a := Tool{Name: "search", Title: "Search", Description: "Search the web.",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","minLength":1},"n":{"type":"integer"}},"required":["q"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"hits":{"type":"array"}}}`),
		Annotations:  json.RawMessage(`{"readOnlyHint":true,"openWorldHint":false}`)}
	b := a
	b.InputSchema = json.RawMessage("{\n  \"required\": [\"q\"],\n  \"properties\": {\"n\": {\"type\": \"integer\"}, \"q\": {\"minLength\": 1, \"type\": \"string\"}},\n  \"type\": \"object\"\n}")
	b.OutputSchema = json.RawMessage(`{ "properties" : { "hits" : { "type" : "array" } } , "type" : "object" }`)
	b.Annotations = json.RawMessage(`{"openWorldHint": false, "readOnlyHint": true}`)
	if a.Hash() != b.Hash() {
		t.Fatal("key order or whitespace changed the hash")
	}
}

func TestHashSeesEveryField(t *testing.T) {
	base := Tool{Name: "search", Description: "Search the web.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`),
		Annotations: json.RawMessage(`{"readOnlyHint":true}`)}
	edits := map[string]func(*Tool){
		"annotations only": func(t *Tool) { t.Annotations = json.RawMessage(`{"readOnlyHint":false}`) },
		"annotations gone": func(t *Tool) { t.Annotations = nil },
		"title":            func(t *Tool) { t.Title = "Search" },
		"description":      func(t *Tool) { t.Description = "Search the web!" },
		"input schema": func(t *Tool) {
			t.InputSchema = json.RawMessage(`{"type":"object","properties":{"q":{"type":"number"}}}`)
		},
		"output schema": func(t *Tool) { t.OutputSchema = json.RawMessage(`{"type":"object"}`) },
		"array order":   func(t *Tool) { t.InputSchema = json.RawMessage(`{"type":"object","required":["b","a"]}`) },
	}
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			changed := base
			edit(&changed)
			if changed.Hash() == base.Hash() {
				t.Fatal("hash did not change")
			}
		})
	}
}

func TestChangedFields(t *testing.T) {
	a := Tool{Name: "x", Description: "d", InputSchema: json.RawMessage(`{"type":"object","a":1,"b":2}`)}
	b := a
	b.InputSchema = json.RawMessage(`{"b":2, "a":1, "type":"object"}`)
	if f := ChangedFields(a, b); len(f) != 0 {
		t.Fatalf("reordered keys: %v", f)
	}
	b.Title, b.Annotations = "X", json.RawMessage(`{"destructiveHint":true}`)
	got, _ := json.Marshal(ChangedFields(a, b))
	if string(got) != `["title","annotations"]` {
		t.Fatalf("got %s", got)
	}
}
