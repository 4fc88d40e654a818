package enrich

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/tdwa"
)

// Outputs are a tool's enrichment outputs; any of them may be missing.
type Outputs struct {
	Profile   *Profile
	Questions []string
	Topics    []string
	// Expansion are the related words of the knowledge expansion (Expander).
	Expansion []string
}

// Component is one piece of a tool's expanded document, embedded on its own.
type Component struct {
	Kind    string
	Ordinal int
	Text    string
}

// ComponentKey identifies a component within its tool: its kind and its ordinal among the
// components of that kind (questions have several). With the tool's id it is the primary
// key of tool_components; DeleteStaleToolComponents takes the keys to keep as the same two
// arrays UpsertToolComponents writes.
type ComponentKey struct {
	Kind    string
	Ordinal int
}

// Key identifies the component within its tool.
func (c Component) Key() ComponentKey { return ComponentKey{Kind: c.Kind, Ordinal: c.Ordinal} }

// Hash is the hex SHA-256 of the text: a component is embedded again only when it changes.
func (c Component) Hash() string {
	h := sha256.Sum256([]byte(c.Text))
	return hex.EncodeToString(h[:])
}

// Components splits the document and its outputs into components, one per kind (one per
// question), empty ones left out, plus `concat`: every retained component (all but
// example_usage, which Tool-DE found hurts retrieval, and the expansion, which is not the
// tool's own text) joined as one text.
func Components(d Document, o Outputs) []Component {
	var out []Component
	add := func(kind string, ordinal int, text string) {
		if text = strings.TrimSpace(text); text != "" {
			out = append(out, Component{Kind: kind, Ordinal: ordinal, Text: text})
		}
	}
	add(tdwa.KindName, 0, SpacedName(d.Name))
	desc := d.Description
	if d.Title != "" {
		desc = strings.TrimSpace(d.Title + ". " + desc)
	}
	add(tdwa.KindDescription, 0, desc)
	add(tdwa.KindParameters, 0, ParametersText(d.Params))
	add(KindGloss, 0, Gloss(desc+"\n"+ParametersText(d.Params)))
	for i, q := range o.Questions {
		add(tdwa.KindQuestion, i, q)
	}
	add(tdwa.KindTopics, 0, strings.Join(o.Topics, "; "))
	if p := o.Profile; p != nil {
		add(tdwa.KindProfileFunction, 0, p.Function)
		add(tdwa.KindProfileTags, 0, strings.Join(p.Tags, ", "))
		add(tdwa.KindProfileWhenToUse, 0, p.WhenToUse)
		add(tdwa.KindProfileLimitation, 0, p.Limitation)
		var ex []string
		for _, e := range p.ExampleUsage {
			ex = append(ex, strings.TrimSpace(e.Query+" "+e.APICall))
		}
		add(tdwa.KindProfileExampleUsage, 0, strings.Join(ex, "\n"))
	}
	add(tdwa.KindExpansion, 0, strings.Join(o.Expansion, " "))
	var all []string
	for _, c := range out {
		if c.Kind != tdwa.KindProfileExampleUsage && c.Kind != tdwa.KindExpansion {
			all = append(all, c.Text)
		}
	}
	add(tdwa.KindConcat, 0, strings.Join(all, "\n"))
	return out
}

// SpacedName is a tool name as words: get_stock_price → "get stock price".
func SpacedName(name string) string { return strings.Join(embed.Words(name), " ") }

// ParametersText renders the parameters as text: spaced names, descriptions and enum values.
func ParametersText(ps []Param) string {
	var lines []string
	for _, p := range ps {
		l := SpacedName(p.Name)
		if len(p.Enum) > 0 {
			l += " (" + strings.Join(p.Enum, ", ") + ")"
		}
		if p.Description != "" {
			l += ": " + p.Description
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}
