package catalog

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// PostgreSQL stores neither a NUL character in text nor a "\u0000" escape or a lone UTF-16
// surrogate in jsonb, and both must be valid UTF-8: a definition holding one would fail
// the whole write it is part of (one tool's import, a whole source's sync). These checks
// find them first, so that the tool is refused (or skipped) by name.

// checkText reports a NUL character or invalid UTF-8 in a string field.
func checkText(field, s string) error {
	switch {
	case !utf8.ValidString(s):
		return fmt.Errorf("%s is not valid UTF-8", field)
	case strings.IndexByte(s, 0) >= 0:
		return fmt.Errorf("%s contains a NUL character", field)
	}
	return nil
}

// checkJSONText reports invalid UTF-8, a \u0000 escape or an unpaired surrogate escape in
// the strings (keys included) of raw, a JSON document that has already been parsed.
func checkJSONText(field string, raw []byte) error {
	if !utf8.Valid(raw) {
		return fmt.Errorf("%s is not valid UTF-8", field)
	}
	inString := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '"':
			inString = !inString
		case c == '\\' && inString:
			i++
			if i >= len(raw) || raw[i] != 'u' || i+4 >= len(raw) {
				continue // \" \\ \n ...: one escaped byte, skipped
			}
			r, _ := strconv.ParseUint(string(raw[i+1:i+5]), 16, 32)
			i += 4
			switch {
			case r == 0:
				return fmt.Errorf("%s contains a NUL character (\\u0000)", field)
			case r >= 0xDC00 && r <= 0xDFFF:
				return fmt.Errorf("%s contains an unpaired UTF-16 surrogate (\\u%04x)", field, r)
			case r >= 0xD800 && r <= 0xDBFF:
				// A high surrogate must be followed at once by an escaped low one.
				if i+6 >= len(raw) || raw[i+1] != '\\' || raw[i+2] != 'u' {
					return fmt.Errorf("%s contains an unpaired UTF-16 surrogate (\\u%04x)", field, r)
				}
				lo, _ := strconv.ParseUint(string(raw[i+3:i+7]), 16, 32)
				if lo < 0xDC00 || lo > 0xDFFF {
					return fmt.Errorf("%s contains an unpaired UTF-16 surrogate (\\u%04x)", field, r)
				}
				i += 6
			}
		}
	}
	return nil
}
