package enrich

import (
	"regexp"
	"strings"
)

// Names written with an ampersand or with initials ("AT&T", "S&P Global", "C.H. Robinson")
// reach a tool's identifier as separate letters (get_at_t_revenue, get_s_p_global_revenue,
// get_c_h_robinson_revenue). Split into words, "at" is a stop word and "t" a single letter:
// the questions the heuristic writes from the name held no word for the company at all. The
// lexical analysis makes one word of "AT&T" (toolgate_text_vector) and of the initials of a
// tool's name (toolgate_name_words, sql/functions/lexical.sql); joinInitials writes the name
// the same way into the heuristic's questions and topics, so all of them say "att".

var (
	initialsCamel    = regexp.MustCompile(`([a-z0-9])([A-Z])`)
	initialsNonAlnum = regexp.MustCompile(`[^A-Za-z0-9]+`)
)

// joinInitials is name as lower-case words with its runs of initials joined
// (joinInitialWords), or name unchanged when it has none.
func joinInitials(name string) string {
	key := strings.ToLower(initialsNonAlnum.ReplaceAllString(initialsCamel.ReplaceAllString(name, "$1 $2"), " "))
	words := strings.Fields(key)
	joined := joinInitialWords(words)
	if len(joined) == len(words) {
		return name
	}
	return strings.Join(joined, " ")
}

// joinInitialWords is the Go twin of toolgate_name_words: a run of two or more words of one
// or two ASCII letters, one of them a single letter other than the words "a" and "i", is one
// word ("at t" -> "att", "s p" -> "sp", "pg e" -> "pge"; "to a" stays); a single "s" ending
// such a run is a possessive ("bj s" of "BJ's") and stays apart.
func joinInitialWords(words []string) []string {
	out := make([]string, 0, len(words))
	var run []string
	flush := func() {
		tail := []string(nil)
		if len(run) >= 2 && run[len(run)-1] == "s" {
			run, tail = run[:len(run)-1], []string{"s"}
		}
		if len(run) >= 2 && hasInitial(run) {
			out = append(out, strings.Join(run, ""))
		} else {
			out = append(out, run...)
		}
		out = append(out, tail...)
		run = run[:0]
	}
	for _, w := range words {
		if shortLetters(w) {
			run = append(run, w)
			continue
		}
		flush()
		out = append(out, w)
	}
	flush()
	return out
}

// shortLetters: w is one or two lower-case ASCII letters.
func shortLetters(w string) bool {
	if len(w) < 1 || len(w) > 2 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// hasInitial: run holds a single letter that is not a word of its own.
func hasInitial(run []string) bool {
	for _, w := range run {
		if len(w) == 1 && w != "a" && w != "i" {
			return true
		}
	}
	return false
}
