package llm

import "testing"

func TestUnfence(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1}`:                         `{"a":1}`,
		"  {\"a\":1}\n":                   `{"a":1}`,
		"```json\n{\"a\":1}\n```":         `{"a":1}`,
		"```JSON\n{\"a\":1}\n```":         `{"a":1}`,
		"```\n{\"a\":1}\n```":             `{"a":1}`,
		"```json {\"a\":1}```":            `{"a":1}`,
		"```{\"a\":[1]}```":               `{"a":[1]}`,
		"\n```json\n{\"b\":\"x\"}\n```\n": `{"b":"x"}`,
	} {
		if got := Unfence(in); got != want {
			t.Errorf("Unfence(%q) = %q, want %q", in, got, want)
		}
	}
}
