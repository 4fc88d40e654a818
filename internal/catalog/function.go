package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/internal/db"
)

// MaxFunctionNameLen is the longest tool name the OpenAI and Anthropic APIs accept.
const MaxFunctionNameLen = 64

// functionNameRE is what those APIs accept as a tool (function) name.
var functionNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// FunctionName is the name under which a tool whose catalog-wide (namespaced) name is name
// is handed to a model API that accepts only ^[a-zA-Z0-9_-]{1,64}$ (OpenAI function calling,
// Anthropic tool use, and MCP hosts that forward tools to them). A catalog name is longer
// (up to 32 + 2 + 128 characters) and may contain ".". A name the APIs accept is kept as it
// is; any other is mapped deterministically: each run of "." becomes "_", the result is cut
// to 55 bytes, and "-" and the first 8 hex digits of the SHA-256 of the whole name are
// appended. The mapping depends on the name alone, so a tool has the same function name in
// every answer, and ResolveFunctionName (or the `name` beside it in a search result) maps
// it back.
func FunctionName(name string) string {
	if functionNameRE.MatchString(name) {
		return name
	}
	return functionPrefix(name) + "-" + nameHash(name)
}

// functionPrefix is the part of a mapped function name before its hash. Catalog names are
// ASCII (CatalogName), so cutting at a byte never splits a character; a name that is not
// is mapped the same way, its other characters treated like ".".
func functionPrefix(name string) string {
	var b strings.Builder
	inRun := false
	for _, r := range name {
		if r == '_' || r == '-' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			b.WriteRune(r)
			inRun = false
			continue
		}
		if !inRun {
			b.WriteByte('_')
		}
		inRun = true
	}
	const keep = MaxFunctionNameLen - 1 - 8
	p := b.String()
	if len(p) > keep {
		p = p[:keep]
	}
	return p
}

func nameHash(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:4])
}

// MappedFunctionName reports whether fn has the shape of a mapped function name, and
// returns the prefix its catalog name has after the mapping of FunctionName.
func MappedFunctionName(fn string) (prefix string, ok bool) {
	if len(fn) < 10 || !functionNameRE.MatchString(fn) {
		return "", false
	}
	p, h := fn[:len(fn)-9], fn[len(fn)-8:]
	if fn[len(fn)-9] != '-' || strings.Trim(h, "0123456789abcdef") != "" {
		return "", false
	}
	return p, true
}

// ResolveFunctionName returns the catalog name of the tool whose function name
// (FunctionName) is fn: fn itself when a tool has that name, else the tool fn is the mapped
// name of. It returns a *ToolNotFoundError when there is none.
func ResolveFunctionName(ctx context.Context, q *db.Queries, fn string) (string, error) {
	if _, err := q.GetToolByName(ctx, fn); err == nil {
		return fn, nil
	} else if !errors.Is(err, pgx.ErrNoRows) {
		return "", err
	}
	prefix, ok := MappedFunctionName(fn)
	source, _, namespaced := strings.Cut(prefix, NamespaceSep)
	if !ok || !namespaced {
		return "", &ToolNotFoundError{Name: fn}
	}
	names, err := q.ListToolNamesByFunctionPrefix(ctx, db.ListToolNamesByFunctionPrefixParams{Source: source, Prefix: prefix})
	if err != nil {
		return "", err
	}
	for _, name := range names {
		if FunctionName(name) == fn {
			return name, nil
		}
	}
	return "", &ToolNotFoundError{Name: fn}
}
