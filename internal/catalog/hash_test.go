package catalog

import (
	"encoding/json"
	"testing"
)

func TestHashIgnoresKeyOrderAndWhitespace(t *testing.T) {
	a := Tool{Name: "t", Description: "d", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a"]}`)}
	b := Tool{Name: "t", Description: "d", InputSchema: json.RawMessage("{\n \"required\": [\"a\"],\n \"properties\": {\"b\": {\"type\": \"integer\"}, \"a\": {\"type\": \"string\"}},\n \"type\": \"object\"\n}")}
	if a.Hash() != b.Hash() {
		t.Fatal("key order or whitespace changed the hash")
	}
}

func TestHashSeesEveryField(t *testing.T) {
	base := Tool{Name: "t", Description: "d", InputSchema: json.RawMessage(`{"type":"object"}`)}
	variants := map[string]Tool{
		"name":          {Name: "u", Description: "d", InputSchema: base.InputSchema},
		"description":   {Name: "t", Description: "e", InputSchema: base.InputSchema},
		"title":         {Name: "t", Title: "T", Description: "d", InputSchema: base.InputSchema},
		"input_schema":  {Name: "t", Description: "d", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{}}}`)},
		"output_schema": {Name: "t", Description: "d", InputSchema: base.InputSchema, OutputSchema: json.RawMessage(`{"type":"object"}`)},
		"annotations":   {Name: "t", Description: "d", InputSchema: base.InputSchema, Annotations: json.RawMessage(`{"destructiveHint":true}`)},
		"array order":   {Name: "t", Description: "d", InputSchema: json.RawMessage(`{"type":"object","required":["b","a"]}`)},
	}
	seen := map[string]string{base.Hash(): "base"}
	for field, v := range variants {
		h := v.Hash()
		if other, dup := seen[h]; dup {
			t.Errorf("changing %s gives the same hash as %s", field, other)
		}
		seen[h] = field
	}
}

func TestHashKeepsNumberLiterals(t *testing.T) {
	a := Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object","maximum":9007199254740993}`)}
	b := Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object","maximum":9007199254740992}`)}
	if a.Hash() == b.Hash() {
		t.Fatal("large integers collapsed through float64")
	}
}

func TestCanonical(t *testing.T) {
	got, err := Canonical(json.RawMessage(`{ "b": [1, {"d": "<x>", "c": null}], "a": true }`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":true,"b":[1,{"c":null,"d":"<x>"}]}`; string(got) != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}
