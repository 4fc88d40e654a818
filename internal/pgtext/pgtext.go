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
