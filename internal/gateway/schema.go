package gateway

import (
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
)

// Tool schemas: stated as objects for the SDK, compiled once per tool version for argument
// validation and cached in the session.

// objectSchema returns a tool schema with "type":"object" stated. The catalog accepts a
// schema that leaves type out, but the SDK refuses (panics on) a tool whose schema does not
// say it, and MCP requires it.
func objectSchema(raw json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	if _, ok := m["type"]; ok {
		return raw
	}
	m["type"] = json.RawMessage(`"object"`)
	out, err := json.Marshal(m)
	if err != nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	return out
}

// schema returns the resolved input schema of a tool at a version, from the session's
// cache (the bound list first).
func (s *session) schema(name, version string, raw json.RawMessage) *jsonschema.Resolved {
	s.mu.Lock()
	c := s.bound[name]
	if c == nil || c.version != version {
		c = s.cache[name]
	}
	s.mu.Unlock()
	if c != nil && c.version == version {
		return c.schema
	}
	c = &cachedTool{version: version, schema: s.g.resolve(name, raw)}
	s.mu.Lock()
	// The cache of unbound tools is small and per session; past the bind limit it
	// starts over rather than growing with every distinct tool called.
	if len(s.cache) >= s.g.opts.BindLimit {
		clear(s.cache)
	}
	s.cache[name] = c
	s.mu.Unlock()
	return c.schema
}

// resolve compiles a tool's input schema for validation. A schema the validator cannot
// handle is logged and skipped: the source server still validates its own input.
func (g *Gateway) resolve(name string, raw json.RawMessage) *jsonschema.Resolved {
	var sch jsonschema.Schema
	if err := json.Unmarshal(raw, &sch); err != nil {
		g.log.Warn("tool input schema not parsable; arguments go unvalidated", "tool", name, "err", err)
		return nil
	}
	r, err := sch.Resolve(nil)
	if err != nil {
		g.log.Warn("tool input schema not resolvable; arguments go unvalidated", "tool", name, "err", err)
		return nil
	}
	return r
}
