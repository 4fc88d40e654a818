// Package pgtext says whether a string can be stored as PostgreSQL text. A text value holds
// neither NUL characters nor invalid UTF-8 (in a UTF8 database): a statement given one
// fails with "invalid byte sequence for encoding", so every input is checked before it
// reaches one.
package pgtext

import (
	"strings"
	"unicode/utf8"
)

// Problem says why s cannot be PostgreSQL text, or returns "" when it can.
func Problem(s string) string {
	switch {
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	case strings.IndexByte(s, 0) >= 0:
		return "contains a NUL character (U+0000)"
	}
	return ""
}

// Storable makes s storable as PostgreSQL text (and as a jsonb string) and at most max
// bytes long: invalid UTF-8 becomes U+FFFD, a NUL character the four characters `\x00`,
// and a longer text is cut at a character boundary and ends in "…". It is for texts that
// toolgate records but does not control, such as an upstream's error message: a record
// that cannot be written is worse than an altered one. max <= 0 leaves the length alone.
func Storable(s string, max int) string {
	if Problem(s) != "" {
		s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", `\x00`)
	}
	if max <= 0 || len(s) <= max {
		return s
	}
	const ellipsis = "…"
	cut := max - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if cut < 0 {
		cut = 0
	}
	return s[:cut] + ellipsis
}
