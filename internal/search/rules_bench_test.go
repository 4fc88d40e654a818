package search_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/search/searchbench"
)

// The cost of curations (docs/benchmarks.md, section Curations):
//
//	go test -run '^$' -bench BenchmarkSearchRules -benchtime 2000x ./internal/search
//
// 5,000 tools; a search key of one of 100 tenants searches hybrid k=10 with the settings
// serve runs with: with no rule and no synonym; with 2,000 query rules (pin, hide and boost,
// exact and contains-words patterns made of the benchmark's query words: 200 global, 18 per
// tenant); with 1,000 synonym entries too (the queries' words, global and the searching
// tenant's); with the synonyms alone; and with neither again. The rules and synonyms are read
// inside the search statement (toolgate_search_rules, toolgate_with_synonyms): the
// difference is what they cost a search.
func BenchmarkSearchRules(b *testing.B) {
	const tools, tenants = 5000, 100
	pool := benchDB(b, tools)
	ctx := context.Background()
	keys := auth.NewKeys(pool, time.Now)
	k, _, err := keys.Create(ctx, auth.Spec{Name: "bench-rules", Scope: auth.ScopeSearch, Tenant: "t000"})
	if err != nil {
		b.Fatal(err)
	}
	caller := *k.Caller()
	queries := searchbench.Queries(rand.New(rand.NewPCG(7, 7)))
	words := map[string]bool{}
	var vocab []string
	for _, q := range queries {
		for _, w := range strings.Fields(q) {
			if !words[w] {
				words[w] = true
				vocab = append(vocab, w)
			}
		}
	}
	rules := func(b *testing.B) {
		b.Helper()
		// rule i: tenant NULL for one in ten, else t000..t099; a pattern of one or two of the
		// queries' words; pin, hide or boost a tool of the catalog.
		_, err := pool.Exec(ctx, `INSERT INTO search_rules (tenant, match, pattern, action, tool, boost, position)
			SELECT CASE WHEN i % 10 = 0 THEN NULL ELSE 't' || lpad((i % $2::int)::text, 3, '0') END,
			       CASE WHEN i % 2 = 0 THEN 'contains' ELSE 'exact' END,
			       CASE WHEN i % 3 = 0 THEN ($1::text[])[1 + i % cardinality($1::text[])]
			            ELSE ($1::text[])[1 + i % cardinality($1::text[])] || ' ' || ($1::text[])[1 + (i * 7) % cardinality($1::text[])] END,
			       (ARRAY['pin', 'hide', 'boost'])[1 + i % 3],
			       t.name,
			       CASE WHEN i % 3 = 2 THEN 1.5 END,
			       CASE WHEN i % 3 = 0 THEN 1 + i % 5 END
			FROM generate_series(1, 2000) i
			JOIN LATERAL (SELECT name FROM tools ORDER BY id OFFSET (i * 37) % $3::int LIMIT 1) t ON true`,
			vocab, tenants, tools)
		if err != nil {
			b.Fatal(err)
		}
	}
	synonyms := func(b *testing.B) {
		b.Helper()
		_, err := pool.Exec(ctx, `INSERT INTO search_synonyms (tenant, word, synonyms)
				SELECT x.tenant, lower(w), ARRAY[w || 's', 'alt' || n, 'other' || n]
				FROM unnest($1::text[]) WITH ORDINALITY AS u (w, n)
				CROSS JOIN (VALUES (NULL::text), ('t000')) AS x (tenant)
				ON CONFLICT DO NOTHING`, vocab)
		if err == nil {
			_, err = pool.Exec(ctx, `INSERT INTO search_synonyms (tenant, word, synonyms)
				SELECT 't' || lpad((1 + g % 99)::text, 3, '0'), 'word' || g, ARRAY['syn' || g]
				FROM generate_series(1, 1000 - 2 * $1::int) g`, len(vocab))
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	empty := func(table string) func(*testing.B) {
		return func(b *testing.B) {
			b.Helper()
			if _, err := pool.Exec(ctx, `TRUNCATE `+table); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		name    string
		prepare func(*testing.B)
	}{
		{"none", nil},
		{"rules=2000", rules},
		{"rules=2000/synonyms=1000", synonyms},
		{"synonyms=1000", empty("search_rules")},
		{"none-again", empty("search_synonyms")},
	} {
		b.Run(fmt.Sprintf("tools=%d/%s", tools, c.name), func(b *testing.B) {
			if c.prepare != nil {
				c.prepare(b)
				c.prepare = nil // once: b.Run calls this function again with a larger b.N
			}
			var nr, ns int
			if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM search_rules), (SELECT count(*) FROM search_synonyms)`).Scan(&nr, &ns); err != nil {
				b.Fatal(err)
			}
			b.Logf("%d rules, %d synonym entries", nr, ns)
			s := search.New(pool, searchbench.Embedder{}, servedSettings(), discard())
			runConcurrent(b, pool, func(i int) error {
				_, err := s.Search(ctx, caller, search.Request{Query: queries[i%len(queries)], K: 10})
				return err
			})
		})
	}
}
