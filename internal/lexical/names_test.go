package lexical_test

import (
	"context"
	"slices"
	"testing"

	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/pgtest"
)

// TestAnalysisNames: the text analysis (toolgate_text_vector, which documents and queries
// share) makes one word of a name of initials joined by an ampersand, and none of a
// legal-form abbreviation. Before, "AT&T" gave no lexeme at all ("at" and "t" are stop
// words) and "Okta Inc." and "HP Inc." shared the rare word "inc".
func TestAnalysisNames(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	for _, c := range []struct{ text, want string }{
		{"AT&T's stock price", "{att,price,stock}"},
		{"at&t", "{att}"},
		{"P&G and S&P Global", "{global,pg,sp}"},
		{"PG&E, M&T Bank, H&M", "{bank,hm,mt,pge}"},
		{"Central Garden & Pet", "{central,garden,pet}"}, // words, not initials
		{"Okta Inc.", "{okta}"},
		{"HP Inc. and Microsoft Corp.", "{hp,microsoft}"},
		{"Acme Ltd, Acme LLC, Acme plc, Acme GmbH, Acme S.A., Acme N.V.", "{acm}"},
		{"a corporate card with limited access", "{access,card,corpor,limit}"}, // words, not legal forms
		{"weather forecast", "{forecast,weather}"},
	} {
		var got string
		if err := pool.QueryRow(context.Background(),
			`SELECT array_agg(l ORDER BY l)::text FROM unnest(tsvector_to_array(toolgate_text_vector($1))) l`, c.text).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("lexemes of %q = %s, want %s", c.text, got, c.want)
		}
	}
	var shared []string
	if err := pool.QueryRow(context.Background(),
		`SELECT coalesce(array_agg(l), '{}') FROM toolgate_query_lexemes('Okta Inc.') l
		 WHERE l IN (SELECT toolgate_query_lexemes('HP Inc.'))`).Scan(&shared); err != nil {
		t.Fatal(err)
	}
	if len(shared) > 0 {
		t.Errorf(`"Okta Inc." and "HP Inc." share the query words %v`, shared)
	}
}

// TestNameWords: the name's words in a tool's document join a run of initials, as the text
// analysis joins "AT&T", so a tool named get_at_t_revenue holds the word its description's
// "AT&T" and a request's give ("att"), at the name's weight.
func TestNameWords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	for in, want := range map[string]string{
		"get at t revenue":           "get att revenue",
		"eval get s p global":        "eval get sp global",
		"get pg e net income":        "get pge net income",
		"get c h robinson":           "get ch robinson",
		"get bj s wholesale club":    "get bj s wholesale club", // BJ's: a possessive
		"get dillard s revenue":      "get dillard s revenue",
		"add to a list":              "add to a list", // "a" is a word
		"get a p stores":             "get ap stores",
		"acme get weather":           "acme get weather",
		"":                           "",
		"x":                          "x",
		"get x y":                    "get xy",
		"github create pull request": "github create pull request",
	} {
		var got string
		if err := pool.QueryRow(ctx, `SELECT toolgate_name_words($1)`, in).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("toolgate_name_words(%q) = %q, want %q", in, got, want)
		}
	}

	exec(t, pool, `INSERT INTO sources (name, kind) VALUES ('fin', 'catalog')`)
	exec(t, pool, `INSERT INTO tools (source_id, name, original_name, description, input_schema, content_hash)
		SELECT s.id, 'fin__get_at_t_revenue', 'get_at_t_revenue', 'Yearly revenue', '{"type":"object"}', 'h'
		FROM sources s`)
	if _, err := lexical.Flush(ctx, pool); err != nil {
		t.Fatal(err)
	}
	var lexemes []string
	var tfs []float32
	if err := pool.QueryRow(ctx, `SELECT lexemes, tfs FROM search_docs`).Scan(&lexemes, &tfs); err != nil {
		t.Fatal(err)
	}
	i := slices.Index(lexemes, "att")
	if i < 0 || tfs[i] != 3 {
		t.Fatalf("document %v (tfs %v): want att at the name's weight 3", lexemes, tfs)
	}
}
