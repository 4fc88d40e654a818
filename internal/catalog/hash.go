package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sort"
)

// Hash is the hex SHA-256 of the tool's canonical definition: name, title, description,
// input schema, output schema and annotations (absent fields left out), encoded as JSON with
// sorted keys and no insignificant whitespace. Key order and formatting of a server's answer
// therefore never change the hash; any change of content does, annotations included.
func (t Tool) Hash() string {
	doc := map[string]any{"name": t.Name, "description": t.Description}
	if t.Title != "" {
		doc["title"] = t.Title
	}
	for key, raw := range map[string]json.RawMessage{
		"input_schema": t.InputSchema, "output_schema": t.OutputSchema, "annotations": t.Annotations,
	} {
		if v, ok := decodeAny(raw); ok {
			doc[key] = v
		}
	}
	var buf bytes.Buffer
	writeCanonical(&buf, doc)
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:])
}

// Canonical re-encodes a JSON document with sorted keys and no insignificant whitespace.
// Numbers keep their literal text.
func Canonical(raw json.RawMessage) (json.RawMessage, error) {
	v, ok := decodeAny(raw)
	if !ok {
		return nil, fmt.Errorf("not a JSON document")
	}
	var buf bytes.Buffer
	writeCanonical(&buf, v)
	return buf.Bytes(), nil
}

func decodeAny(raw json.RawMessage) (any, bool) {
	if len(raw) == 0 {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || v == nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF { // trailing data: not one JSON document
		return nil, false
	}
	return v, true
}

func writeCanonical(buf *bytes.Buffer, v any) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k)
			buf.WriteByte(':')
			writeCanonical(buf, x[k])
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeCanonical(buf, e)
		}
		buf.WriteByte(']')
	case string:
		writeString(buf, x)
	case json.Number:
		buf.WriteString(x.String())
	case bool:
		if x {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case nil:
		buf.WriteString("null")
	}
}

func writeString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // a string always encodes
	buf.Truncate(buf.Len() - 1) // Encode appends a newline
}
