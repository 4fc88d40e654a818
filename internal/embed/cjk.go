package embed

// Chinese, Japanese and Korean text writes no spaces between words, so Words makes a whole
// clause one word ("查询车站的详细信息") and its word, stem and bigram features match only
// that exact clause. cjkFeatures adds the clause's overlapping character pairs ("查询",
// "询车", "车站", …), the unit the lexical index splits the same text into
// (toolgate_cjk_bigrams, sql/functions/lexical.sql): a query for 车站 (station) shares a
// feature with every text holding that word. A run of one character gives the character.

// cjkFeatures calls add with a 'k' feature for each character pair of the CJK runs of
// word (weighted weight, as the word's other features); a word without CJK characters
// adds nothing, so text without them embeds as before.
func cjkFeatures(word string, weight float64, add func(feature string, weight float64)) {
	var run []rune
	flush := func() {
		switch {
		case len(run) == 1:
			add("k"+string(run), weight)
		case len(run) > 1:
			for i := 0; i+2 <= len(run); i++ {
				add("k"+string(run[i:i+2]), weight)
			}
		}
		run = run[:0]
	}
	for _, r := range word {
		if IsCJK(r) {
			run = append(run, r)
		} else {
			flush()
		}
	}
	flush()
}

// IsCJK reports whether r is a character of the scripts written without spaces: kana,
// CJK ideographs and hangul syllables (the ranges of toolgate_cjk_bigrams).
func IsCJK(r rune) bool {
	return (r >= 0x3040 && r <= 0x30ff) || (r >= 0x3400 && r <= 0x4dbf) || (r >= 0x4e00 && r <= 0x9fff) ||
		(r >= 0xf900 && r <= 0xfaff) || (r >= 0xac00 && r <= 0xd7af)
}
