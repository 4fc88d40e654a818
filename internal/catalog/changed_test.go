package catalog

import (
	"encoding/json"
	"testing"
)

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

func TestHashSeesAnnotationOnlyChange(t *testing.T) {
	a := Tool{Name: "pay", Description: "Pay.", InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: json.RawMessage(`{"readOnlyHint":true,"destructiveHint":false}`)}
	b := a
	b.Annotations = json.RawMessage(`{ "destructiveHint": false, "readOnlyHint": true }`)
	if a.Hash() != b.Hash() {
		t.Fatal("annotation key order changed the hash")
	}
	b.Annotations = json.RawMessage(`{"readOnlyHint":true,"destructiveHint":true}`)
	if a.Hash() == b.Hash() {
		t.Fatal("annotation-only change kept the hash")
	}
}
