package search_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	tgcatalog "github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// languageCatalog is one tool per language, each describing what it does in that language
// with an English identifier (name, parameter name), as real servers do.
func languageCatalog() []tgcatalog.Tool {
	withParam := func(name, description, param, paramDescription string) tgcatalog.Tool {
		schema, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{
			param: map[string]any{"type": "string", "description": paramDescription}}})
		return tgcatalog.Tool{Name: name, Description: description, InputSchema: schema}
	}
	return []tgcatalog.Tool{
		withParam("get_forecast", "Ruft die aktuellen Wettervorhersagen für eine Stadt ab und gibt die Temperaturen zurück.",
			"city", "Der Name der Stadt"),
		withParam("list_trains", "Recherche les horaires des trains entre deux gares et renvoie les départs de la journée.",
			"station", "Le nom de la gare de départ"),
		testfactory.Tool("buscar_vuelos", "Busca los vuelos disponibles entre dos ciudades y devuelve los precios de los billetes."),
		testfactory.Tool("get_rates", "Получает курсы валют на сегодня и возвращает их для всех стран."),
		testfactory.Tool("zoek_boeken", "Zoekt boeken in de bibliotheek op titel en geeft de beschikbaarheid van het exemplaar terug."),
		withParam("get_weather", "Get the weather forecast for a city and return the temperatures.", "city", "The name of the city"),
	}
}

// Each tool is indexed in the language of its description, detected from its stop words: a
// query finds a German tool by another inflection of its words ("Wettervorhersage" and the
// description's "Wettervorhersagen" share the stem the german configuration gives, not the
// english one), a French one by "horaire", and so on; an English query finds them by their
// English identifiers. Every BM25 score equals the Go reference, the queries analysed by
// every language the index holds.
func TestToolsAreIndexedInTheirLanguage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	testfactory.Catalog(ctx, t, pool, "world", languageCatalog(), nil)
	want := map[string]string{
		"world__get_forecast": "german", "world__list_trains": "french", "world__buscar_vuelos": "spanish",
		"world__get_rates": "russian", "world__zoek_boeken": "dutch", "world__get_weather": "english",
	}
	rows, err := pool.Query(ctx, `SELECT t.name, d.language FROM search_docs d JOIN tools t ON t.id = d.tool_id`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for rows.Next() {
		var name, lang string
		if err := rows.Scan(&name, &lang); err != nil {
			t.Fatal(err)
		}
		got[name] = lang
	}
	rows.Close()
	for name, lang := range want {
		if got[name] != lang {
			t.Errorf("%s indexed in %q, want %q", name, got[name], lang)
		}
	}
	var langs []string
	if err := pool.QueryRow(ctx, `SELECT array_agg(language || ':' || docs ORDER BY language) FROM search_languages`).Scan(&langs); err != nil {
		t.Fatal(err)
	}
	if w := []string{"dutch:1", "english:1", "french:1", "german:1", "russian:1", "spanish:1"}; !slices.Equal(langs, w) {
		t.Errorf("search_languages = %v, want %v", langs, w)
	}

	svc := search.New(pool, nil, search.DefaultSettings(), discard())
	for _, tc := range []struct{ query, want string }{
		{"Wettervorhersage Temperatur", "world__get_forecast"}, // german stems: wettervorhersag, temperatur
		{"horaire des trains", "world__list_trains"},           // french: horair, train
		{"vuelo barato", "world__buscar_vuelos"},               // spanish: vuel
		{"курс валюты", "world__get_rates"},                    // russian: курс, валют
		{"boek zoeken", "world__zoek_boeken"},                  // dutch: boek, zoek
		{"forecast", "world__get_forecast"},                    // the English name of a German tool
		{"station", "world__list_trains"},                      // the English parameter name of a French one
	} {
		resp := mustSearch(t, ctx, svc, search.Request{Query: tc.query, Mode: search.ModeLexical, K: 3})
		if len(resp.Results) == 0 || resp.Results[0].Name != tc.want {
			t.Errorf("%q: %+v, want %s first", tc.query, resp.Results, tc.want)
		}
	}
	checkBM25(t, pool, search.DefaultSettings(), []string{"Wettervorhersage Temperatur", "horaire des trains",
		"vuelo barato", "курс валюты", "boek zoeken", "weather forecast city", "the name of the city"})

	// the German tool gone, german is no longer a language of the index
	testfactory.Catalog(ctx, t, pool, "world", languageCatalog()[1:], nil)
	var german bool
	if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM search_languages WHERE language = 'german')`).Scan(&german); err != nil {
		t.Fatal(err)
	}
	if german {
		t.Error("search_languages still holds german after its only tool was removed")
	}
}

// An English tool's document is exactly what the english configuration made of it before
// languages were detected (the formula of migration 0021's index, copied here): English
// catalogs rank as they did. Its stop words do not make it another language, even the words
// English shares with others ("a", "de", "die", "in", "also").
func TestEnglishDocumentsAreUnchanged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	tools := []tgcatalog.Tool{
		languageCatalog()[5],
		testfactory.Tool("roll_die", "Roll a die in a game and also report the de facto odds."),
		{Name: "search_notes", Title: "Note search", Description: "Search the notes of a user by words in their title or body.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"queryText":{"type":"string","description":"The words to find"},"max_results":{"type":"integer","description":"At most this many notes"}}}`)},
	}
	testfactory.Catalog(ctx, t, pool, "en", tools, nil)
	rows, err := pool.Query(ctx, `
		SELECT t.name, d.language, d.lexemes = x.lexemes AND d.tfs = x.tfs
		FROM tools t
		JOIN search_docs d ON d.tool_id = t.id
		CROSS JOIN LATERAL (
			SELECT array_agg(v.lexeme ORDER BY v.lexeme) AS lexemes,
			       array_agg((SELECT sum(toolgate_field_weight(w)) FROM unnest(v.weights) w)::real ORDER BY v.lexeme) AS tfs
			FROM unnest(
			       setweight(to_tsvector('english', toolgate_name_key(t.name) || ' ' || coalesce(t.title, '')), 'A')
			    || setweight(to_tsvector('english', t.description || ' '), 'C')
			    || setweight(to_tsvector('english', coalesce(
			           (SELECT string_agg(toolgate_name_key(p.key) || ' ' || coalesce(p.value ->> 'description', ''), ' ')
			            FROM jsonb_each(t.input_schema -> 'properties') p), '')), 'D')) v
		) x`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var name, lang string
		var same bool
		if err := rows.Scan(&name, &lang, &same); err != nil {
			t.Fatal(err)
		}
		n++
		if lang != "english" || !same {
			t.Errorf("%s: language %q, same document as the english configuration's: %v", name, lang, same)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(tools) {
		t.Fatalf("%d documents, want %d", n, len(tools))
	}
}

// search_stopwords holds exactly words the configurations drop: ts_lexize of the language's
// snowball dictionary gives no lexeme for each of them.
func TestStopWordsAreTheConfigurations(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	var total, stop, langs int
	if err := pool.QueryRow(context.Background(), `
		SELECT count(*), count(*) FILTER (WHERE ts_lexize((language || '_stem')::regdictionary, word) = '{}'),
		       count(DISTINCT language)
		FROM search_stopwords`).Scan(&total, &stop, &langs); err != nil {
		t.Fatal(err)
	}
	if total < 2000 || stop != total || langs != 15 {
		t.Errorf("%d stop words in %d languages, %d of them dropped by their configuration", total, langs, stop)
	}
}

// An English query finds a Chinese tool by the English glosses of its words (the gloss
// component, field D), which the enrichment adds: "weather" finds the tool described as
// 查询指定城市的天气 though neither its name nor its parameters say it; scores stay equal
// to the Go reference.
func TestEnglishQueriesFindChineseToolsByTheirGlosses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	_, res := testfactory.Catalog(ctx, t, pool, "cn", []tgcatalog.Tool{
		testfactory.Tool("query_1", "通过车站的电报码查询车站的详细信息"),
		testfactory.Tool("query_2", "查询指定城市的天气"),
		testfactory.Tool("query_3", "获取所有菜谱"),
	}, nil)
	testfactory.Enrich(ctx, t, testfactory.LocalEnricher(pool, 2), res.Changed...)
	flush(t, pool)
	svc := search.New(pool, nil, search.DefaultSettings(), discard())
	for _, tc := range []struct{ query, want string }{
		{"weather", "cn__query_2"},
		{"rail station", "cn__query_1"},
		{"recipe", "cn__query_3"},
		{"天气", "cn__query_2"},
	} {
		resp := mustSearch(t, ctx, svc, search.Request{Query: tc.query, Mode: search.ModeLexical, K: 3})
		if len(resp.Results) == 0 || resp.Results[0].Name != tc.want {
			t.Errorf("%q: %+v, want %s first", tc.query, resp.Results, tc.want)
		}
	}
	checkBM25(t, pool, search.DefaultSettings(), []string{"weather", "rail station", "recipe", "天气"})
}

// A query is analysed by each language the index holds, without the English stop words
// those languages keep: a French document quoting English holds 'the', and an English
// query's "the" must not find it as a rare word.
func TestQueryLexemesLeaveOutEnglishStopWords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	testfactory.Catalog(ctx, t, pool, "fr", []tgcatalog.Tool{
		testfactory.Tool("list_commits", "Récupère la liste des changements du dépôt et renvoie the latest commit de la branche."),
	}, nil)
	var docHasThe bool
	var lexemes []string
	if err := pool.QueryRow(ctx, `SELECT 'the' = ANY (lexemes) FROM search_docs`).Scan(&docHasThe); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT array_agg(l ORDER BY l) FROM toolgate_query_lexemes('the latest commits') l`).Scan(&lexemes); err != nil {
		t.Fatal(err)
	}
	// english: latest, commit; french: latest, commit (its stem of "commits")
	if !docHasThe || !slices.Equal(lexemes, []string{"commit", "latest"}) {
		t.Errorf("the French document holds 'the': %v; query lexemes %v, want [commit latest]", docHasThe, lexemes)
	}
}
