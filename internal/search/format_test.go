package search_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	tgcatalog "github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// goldenTools are two tools whose rendering covers every branch of the formats: a name
// the model APIs refuse (a "."), a title, an output schema, annotations, characters an
// HTML-safe encoder escapes and spacing the stored JSON has; and a tool with none of the
// optional fields.
var goldenTools = []tgcatalog.Tool{
	{
		Name: "v1.quote", Title: "Quote <&>", Description: "Latest price of a ticker & its <currency>.",
		InputSchema:  json.RawMessage(`{"type": "object", "properties": {"ticker": {"type": "string", "description": "a <b> & c"}}, "required": ["ticker"]}`),
		OutputSchema: json.RawMessage(`{"type": "object", "properties": {"price": {"type": "number"}}}`),
		Annotations:  json.RawMessage(`{"readOnlyHint": true, "title": "Quote"}`),
	},
	testfactory.Tool("plain_tool", "A plain tool without optional fields."),
}

// TestFormatGolden pins the bytes of a result's tool in every format: the answers of
// POST /search carry them as they are.
func TestFormatGolden(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	testfactory.Catalog(ctx, t, pool, "acme", goldenTools, nil)
	s := newService(pool)
	for _, tc := range []struct {
		query  string
		format search.Format
		want   string
	}{
		{"quote", search.FormatOpenAI, `{"function":{"description":"Latest price of a ticker \u0026 its \u003ccurrency\u003e.","name":"acme__v1_quote-7f91e876","parameters":{"type":"object","required":["ticker"],"properties":{"ticker":{"type":"string","description":"a \u003cb\u003e \u0026 c"}}}},"type":"function"}`},
		{"quote", search.FormatAnthropic, `{"description":"Latest price of a ticker \u0026 its \u003ccurrency\u003e.","input_schema":{"type":"object","required":["ticker"],"properties":{"ticker":{"type":"string","description":"a \u003cb\u003e \u0026 c"}}},"name":"acme__v1_quote-7f91e876"}`},
		{"quote", search.FormatMCP, `{"annotations":{"title":"Quote","readOnlyHint":true},"description":"Latest price of a ticker \u0026 its \u003ccurrency\u003e.","inputSchema":{"type":"object","required":["ticker"],"properties":{"ticker":{"type":"string","description":"a \u003cb\u003e \u0026 c"}}},"name":"acme__v1_quote-7f91e876","outputSchema":{"type":"object","properties":{"price":{"type":"number"}}},"title":"Quote \u003c\u0026\u003e"}`},
		{"quote", search.FormatRaw, `{"annotations":{"title":"Quote","readOnlyHint":true},"description":"Latest price of a ticker \u0026 its \u003ccurrency\u003e.","input_schema":{"type":"object","required":["ticker"],"properties":{"ticker":{"type":"string","description":"a \u003cb\u003e \u0026 c"}}},"name":"acme__v1.quote","original_name":"v1.quote","output_schema":{"type":"object","properties":{"price":{"type":"number"}}},"source":"acme","title":"Quote \u003c\u0026\u003e"}`},
		{"plain_tool", search.FormatOpenAI, `{"function":{"description":"A plain tool without optional fields.","name":"acme__plain_tool","parameters":{"type":"object"}},"type":"function"}`},
		{"plain_tool", search.FormatAnthropic, `{"description":"A plain tool without optional fields.","input_schema":{"type":"object"},"name":"acme__plain_tool"}`},
		{"plain_tool", search.FormatMCP, `{"description":"A plain tool without optional fields.","inputSchema":{"type":"object"},"name":"acme__plain_tool"}`},
		{"plain_tool", search.FormatRaw, `{"annotations":null,"description":"A plain tool without optional fields.","input_schema":{"type":"object"},"name":"acme__plain_tool","original_name":"plain_tool","output_schema":null,"source":"acme","title":null}`},
	} {
		resp := mustSearch(t, ctx, s, search.Request{Query: tc.query, Format: tc.format, K: 1, Mode: search.ModeLexical})
		if len(resp.Results) != 1 {
			t.Fatalf("%s %q: %v", tc.format, tc.query, names(resp))
		}
		got, err := json.Marshal(resp.Results[0].Tool)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("%s %q:\n got %s\nwant %s", tc.format, tc.query, got, tc.want)
		}
		// The response embeds the same bytes.
		whole, err := json.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(whole), `"tool":`+tc.want+`}`) {
			t.Errorf("%s %q: response %s", tc.format, tc.query, whole)
		}
	}
}
