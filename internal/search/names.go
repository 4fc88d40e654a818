package search

import (
	"regexp"
	"strings"
	"unicode"
)

// A tool goes first ("exact names first", docs/search.md) only when the query names it:
//
//   - a word of the query written as an identifier (get_weather, getWeather, list-files,
//     acme__get_weather, files.read, or anything between backticks) whose name key equals
//     the tool's namespaced or original name key, or
//   - the whole query, once the words that only ask to use something are dropped ("use the
//     search tool" → "search"), equals the tool's name words.
//
// Ordinary words that happen to be a tool's name ("right now", "local currency", "search
// engines") name nothing: "now", "local" and "search" are parts of a longer request.

// nameKey is the Go twin of the SQL function toolgate_name_key: lower-case words separated
// by one space, camelCase, snake_case, kebab-case and the "__" separator all split.
func nameKey(s string) string {
	if plainWord(s) {
		return s // nothing to split or lower: most words of a query
	}
	s = camelBoundary.ReplaceAllString(s, "$1 $2")
	s = nonAlnum.ReplaceAllString(s, " ")
	return strings.TrimSpace(strings.ToLower(s))
}

// plainWord: s has only lower-case ASCII letters and digits, so nameKey(s) is s.
func plainWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

var (
	camelBoundary = regexp.MustCompile(`([a-z0-9])([A-Z])`)
	nonAlnum      = regexp.MustCompile(`[^A-Za-z0-9]+`)
	backticked    = regexp.MustCompile("`([^`]+)`")
)

// requestWords only ask to use something: they are dropped before the whole query is
// compared with a name.
var requestWords = map[string]bool{
	"use": true, "call": true, "run": true, "invoke": true, "execute": true, "the": true,
	"a": true, "an": true, "tool": true, "function": true, "please": true,
}

// nameKeys are the name keys a query names: the keys of its identifier-form words, and the
// key of the whole query without its request words. Duplicates are removed.
func nameKeys(query string) []string {
	var keys []string
	seen := map[string]bool{}
	add := func(k string) {
		if k != "" && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	for _, m := range backticked.FindAllStringSubmatch(query, -1) {
		add(nameKey(m[1]))
	}
	var rest []string
	for _, w := range strings.Fields(query) {
		w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' })
		if identifierForm(w) {
			add(nameKey(w))
		}
		for _, part := range strings.Fields(nameKey(w)) {
			if !requestWords[part] {
				rest = append(rest, part)
			}
		}
	}
	add(strings.Join(rest, " "))
	return keys
}

// identifierForm: a word that is written as a name, not as prose: snake_case, camelCase
// (a lower-case letter or digit followed by a capital), or letters joined by "-" or ".".
func identifierForm(w string) bool {
	rs := []rune(w)
	for i := 1; i < len(rs); i++ {
		p, r := rs[i-1], rs[i]
		switch {
		case r == '_' || p == '_':
			return true
		case unicode.IsUpper(r) && (unicode.IsLower(p) || unicode.IsDigit(p)):
			return true
		case (p == '-' || p == '.') && i >= 2 && isAlnum(rs[i-2]) && isAlnum(r):
			return true
		}
	}
	return false
}

func isAlnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
