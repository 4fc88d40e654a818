package gateway

import (
	"context"
	"strings"
	"unicode"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/db"
)

// KeywordFinder is keyword retrieval straight from the tools table (name or description
// containing the query's words), the RFC's required no-embedding baseline. It writes no
// retrieval log (SearchID is 0); the search service's Finder, which runs the hybrid search
// statement and logs it, replaces it where available.
type KeywordFinder struct {
	q *db.Queries
}

// NewKeywordFinder returns a KeywordFinder over the catalog in pool.
func NewKeywordFinder(pool *pgxpool.Pool) *KeywordFinder {
	return &KeywordFinder{q: db.New(pool)}
}

// Find implements Finder.
func (f *KeywordFinder) Find(ctx context.Context, req FindRequest) (FindResult, error) {
	patterns := keywordPatterns(req.Query)
	if len(patterns) == 0 {
		return FindResult{Tools: []FoundTool{}}, nil
	}
	var sources []string
	if req.Caller != nil {
		sources = req.Caller.Sources
		if sources != nil && len(sources) == 0 {
			return FindResult{Tools: []FoundTool{}}, nil
		}
	}
	rows, err := f.q.KeywordTools(ctx, db.KeywordToolsParams{Patterns: patterns, Sources: sources, MaxResults: int32(req.Limit)})
	if err != nil {
		return FindResult{}, err
	}
	res := FindResult{Tools: make([]FoundTool, 0, len(rows))}
	for _, r := range rows {
		res.Tools = append(res.Tools, FoundTool{
			Name: r.Name, SourceName: r.SourceName, OriginalName: r.OriginalName, Title: deref(r.Title),
			Description: r.Description, InputSchema: r.InputSchema, OutputSchema: r.OutputSchema,
			Annotations: r.Annotations, Version: r.ContentHash,
		})
	}
	return res, nil
}

// keywordPatterns turns a query into ILIKE patterns, one per distinct word of two or more
// letters or digits (so no LIKE wildcard gets through). `get_stock-price` gives get, stock, price.
func keywordPatterns(query string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(query), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len([]rune(w)) < 2 || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, "%"+w+"%")
	}
	return out
}
