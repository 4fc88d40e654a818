package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/gateway"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// TestSearchFinderGolden pins the tool find_tools gets from the search, field by field:
// the schemas exactly as the MCP answers carry them (compact, HTML characters escaped), a
// missing output schema or annotation as nil, a missing title as "".
func TestSearchFinderGolden(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	testfactory.Catalog(ctx, t, pool, "acme", []catalog.Tool{
		{
			Name: "v1.quote", Title: "Quote <&>", Description: "Latest price of a ticker & its <currency>.",
			InputSchema:  json.RawMessage(`{"type": "object", "properties": {"ticker": {"type": "string", "description": "a <b> & c"}}, "required": ["ticker"]}`),
			OutputSchema: json.RawMessage(`{"type": "object", "properties": {"price": {"type": "number"}}}`),
			Annotations:  json.RawMessage(`{"readOnlyHint": true, "title": "Quote"}`),
		},
		testfactory.Tool("plain_tool", "A plain tool without optional fields."),
	}, nil)
	f := gateway.SearchFinder{Search: search.New(pool, nil, search.DefaultSettings(), slog.New(slog.DiscardHandler))}
	for _, tc := range []struct{ query, want string }{
		{"quote", `name=acme__v1.quote source=acme original=v1.quote title="Quote <&>" description="Latest price of a ticker & its <currency>." input={"type":"object","required":["ticker"],"properties":{"ticker":{"type":"string","description":"a \u003cb\u003e \u0026 c"}}} output={"type":"object","properties":{"price":{"type":"number"}}}(nil=false) annotations={"title":"Quote","readOnlyHint":true}(nil=false) version=true`},
		{"plain_tool", `name=acme__plain_tool source=acme original=plain_tool title="" description="A plain tool without optional fields." input={"type":"object"} output=(nil=true) annotations=(nil=true) version=true`},
	} {
		res, err := f.Find(ctx, gateway.FindRequest{Query: tc.query, Limit: 1, Caller: search.Internal()})
		if err != nil || len(res.Tools) != 1 {
			t.Fatalf("%q: %+v, %v", tc.query, res, err)
		}
		tl := res.Tools[0]
		got := fmt.Sprintf("name=%s source=%s original=%s title=%q description=%q input=%s output=%s(nil=%t) annotations=%s(nil=%t) version=%t",
			tl.Name, tl.SourceName, tl.OriginalName, tl.Title, tl.Description, tl.InputSchema,
			tl.OutputSchema, tl.OutputSchema == nil, tl.Annotations, tl.Annotations == nil, len(tl.Version) == 64)
		if got != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.query, got, tc.want)
		}
	}
}
