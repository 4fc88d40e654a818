package api_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// TestWhyNotExplainsAnyNamedTool: explain_tools gives a tool the search ranked 12th with
// k = 5 its rank 12, the score and the branch numbers it has in the k = 20 answer of the
// same search; a tool of a source the key may not search gets exactly the answer of a
// name no tool has; a disabled tool says disabled.
func TestWhyNotExplainsAnyNamedTool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	var tools []catalog.Tool
	for i := range 16 {
		// ever fewer mentions of the query's words, so that the ranking has a long tail
		tools = append(tools, testfactory.Tool(fmt.Sprintf("tool_%02d", i),
			strings.Repeat("weather ", 16-i)+fmt.Sprintf("report number %d for a city", i)))
	}
	tools = append(tools, testfactory.Tool("old_weather", "Weather forecast of a city, retired."))
	_, res := testfactory.Catalog(ctx, t, pool, "pub", tools, nil)
	_, hiddenRes := testfactory.Catalog(ctx, t, pool, "priv", []catalog.Tool{
		testfactory.Tool("secret_weather", "Weather forecast of a city.")}, nil)
	enricher := testfactory.LocalEnricher(pool, 2)
	testfactory.Enrich(ctx, t, enricher, append(res.Changed, hiddenRes.Changed...)...)
	if _, err := sources.SetToolEnabled(ctx, pool, "pub__old_weather", false); err != nil {
		t.Fatal(err)
	}
	if _, err := lexical.Flush(ctx, pool); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	keys := auth.NewKeys(pool, time.Now)
	_, key, err := keys.Create(ctx, auth.Spec{Name: "pubonly", Scope: auth.ScopeSearch, Sources: []string{"pub"}})
	if err != nil {
		t.Fatal(err)
	}
	e := api.New(api.Deps{Pool: pool, Logger: log, Keys: keys,
		Search: search.New(pool, embed.NewLocal(384), search.DefaultSettings(), log)})

	const query = `"query":"weather report for a city","plan":"none"`
	r := do(t, e, http.MethodPost, "/search", key, `{`+query+`,"k":20}`)
	results, _ := r.body["results"].([]any)
	if r.status != http.StatusOK || len(results) < 12 {
		t.Fatalf("k=20: %d, %d results: %v", r.status, len(results), r.body)
	}
	twelfth := results[11].(map[string]any)
	name := twelfth["name"].(string)

	r = do(t, e, http.MethodPost, "/search", key,
		`{`+query+`,"k":5,"explain_tools":["`+name+`","priv__secret_weather","pub__no_such_tool","pub__old_weather"]}`)
	if r.status != http.StatusOK || len(r.body["results"].([]any)) != 5 {
		t.Fatalf("why not: %d %v", r.status, r.body)
	}
	got, _ := r.body["explained_tools"].([]any)
	if len(got) != 4 {
		t.Fatalf("explained_tools: %v", r.body["explained_tools"])
	}
	x := got[0].(map[string]any)
	expl, _ := x["explanation"].(map[string]any)
	lex, _ := expl["lexical"].(map[string]any)
	vec, _ := expl["vector"].(map[string]any)
	if x["name"] != name || x["rank"] != 12.0 || x["returned"] != false || x["score"] != twelfth["score"] ||
		!strings.Contains(mustJSON(x["reasons"]), `"code":"below_k"`) {
		t.Errorf("the 12th: %s\nwant rank 12, score %v", mustJSON(x), twelfth["score"])
	}
	if lex == nil || lex["rank"] != orZero(twelfth["lexical_rank"]) || lex["bm25"] != twelfth["bm25"] ||
		len(lex["terms"].([]any)) == 0 || vec == nil || vec["similarity"].(float64) <= 0 ||
		vec["rank"] != twelfth["vector_rank"] || expl["fused_score"] != twelfth["score"] {
		t.Errorf("the 12th's branches: %s\nits result at k=20: %s", mustJSON(expl), mustJSON(twelfth))
	}
	hidden, missing := mustJSON(got[1]), mustJSON(got[2])
	if want := strings.Replace(missing, "pub__no_such_tool", "priv__secret_weather", 1); hidden != want {
		t.Errorf("a hidden tool's answer differs from a missing one's:\nhidden  %s\nmissing %s", hidden, missing)
	}
	if !strings.Contains(missing, `"code":"not_found"`) || !strings.Contains(missing, `"explanation":null`) {
		t.Errorf("missing tool: %s", missing)
	}
	if d := mustJSON(got[3]); !strings.Contains(d, `"code":"disabled"`) || !strings.Contains(d, `"rank":null`) {
		t.Errorf("disabled tool: %s", d)
	}
	// a returned tool says so, with its place
	r = do(t, e, http.MethodPost, "/search", key, `{`+query+`,"k":5,"explain_tools":["`+results[0].(map[string]any)["name"].(string)+`"]}`)
	if x := r.body["explained_tools"].([]any)[0].(map[string]any); x["returned"] != true || x["rank"] != 1.0 {
		t.Errorf("a returned tool: %s", mustJSON(x))
	}
	if r := do(t, e, http.MethodPost, "/search", key, `{`+query+`,"explain_tools":["a","b","c","d","e","f","g","h","i","j","k"]}`); r.status != http.StatusBadRequest {
		t.Errorf("11 names: %d %v", r.status, r.body)
	}
}

// orZero is a result's rank as an explanation's lexical rank: 0 for none.
func orZero(v any) any {
	if v == nil {
		return 0.0
	}
	return v
}
