package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/pgtest"
)

var apiName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Names the model APIs accept stay; the others (a ".", more than 64 characters) map to a
// name they accept, the same every time, keeping names that differ only in replaced or
// cut characters apart.
func TestFunctionName(t *testing.T) {
	long := "docs__" + strings.Repeat("a", 100)
	for _, tc := range []struct{ name, want string }{
		{"fin__get_quote", "fin__get_quote"},
		{"x__" + strings.Repeat("b", 61), "x__" + strings.Repeat("b", 61)},
	} {
		if got := catalog.FunctionName(tc.name); got != tc.want {
			t.Errorf("FunctionName(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
	seen := map[string]string{}
	for _, name := range []string{
		"docs__v1.search", "docs__v1_search.", "docs__v1..search", long, long + "b",
		"x__" + strings.Repeat("b", 62), "a-b__" + strings.Repeat("z.", 70),
	} {
		got := catalog.FunctionName(name)
		if !apiName.MatchString(got) || catalog.FunctionName(name) != got {
			t.Errorf("FunctionName(%q) = %q: not an API name, or not deterministic", name, got)
		}
		if other, dup := seen[got]; dup {
			t.Errorf("%q and %q share the function name %q", name, other, got)
		}
		seen[got] = name
		if _, ok := catalog.MappedFunctionName(got); !ok {
			t.Errorf("MappedFunctionName(%q) = false for a mapped name", got)
		}
	}
	if got, want := catalog.FunctionName("docs__v1.search"), "docs__v1_search-"; !strings.HasPrefix(got, want) || len(got) != len(want)+8 {
		t.Errorf("FunctionName(docs__v1.search) = %q, want %s<8 hex>", got, want)
	}
	for _, fn := range []string{"fin__get_quote", "fin__get_quote-1234567g", "short-12345678"[:9]} {
		if _, ok := catalog.MappedFunctionName(fn); ok {
			t.Errorf("MappedFunctionName(%q) = true", fn)
		}
	}
}

// A function name resolves to its tool against the stored catalog: a verbatim name to
// itself, a mapped one to the tool it stands for; names of no tool are not found.
func TestResolveFunctionName(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	long := strings.Repeat("l", 70)
	tools := []catalog.Tool{{Name: "v1.search"}, {Name: "v1_search"}, {Name: long}, {Name: long + ".x"}, {Name: "plain"}}
	for i := range tools {
		tools[i].Description = "Tool " + tools[i].Name + "."
		tools[i].InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		src, err := db.New(tx).EnsureCatalogSource(ctx, "docs")
		if err != nil {
			return err
		}
		_, err = catalog.Apply(ctx, tx, src, tools, catalog.ApplyOptions{Validate: true})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	q := db.New(pool)
	for _, tool := range tools {
		name := catalog.ToolName("docs", tool.Name)
		fn := catalog.FunctionName(name)
		got, err := catalog.ResolveFunctionName(ctx, q, fn)
		if err != nil || got != name {
			t.Errorf("ResolveFunctionName(%q) = %q, %v; want %q", fn, got, err, name)
		}
	}
	var nf *catalog.ToolNotFoundError
	for _, fn := range []string{"docs__nothing", catalog.FunctionName("docs__v2.search"), catalog.FunctionName("other__v1.search")} {
		if got, err := catalog.ResolveFunctionName(ctx, q, fn); !errors.As(err, &nf) {
			t.Errorf("ResolveFunctionName(%q) = %q, %v; want not found", fn, got, err)
		}
	}
}
