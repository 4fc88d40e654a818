package enrich

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"strings"
	"sync"
)

// KindGloss is the component holding the English glosses of a tool's Chinese words
// (Gloss). It is part of the lexical document at the lowest weight (parameters, field D,
// sql/functions/lexical.sql) and of the concat text; no TDWA weight names it.
const KindGloss = "gloss"

// maxGlosses bounds a tool's gloss: a long Chinese description adds a paragraph of
// English words, not pages.
const maxGlosses = 40

// The glossary: Chinese words of two or three characters and their first English senses,
// derived from CC-CEDICT (CC BY-SA 4.0; glossary/NOTICE, scripts/cedict-glossary.sh).
//
//go:embed glossary/cedict-zh-en.tsv.gz
var glossaryGz []byte

// glossary parses the embedded file once, on first use (about 60,000 words); the map is
// never written after.
var glossary = sync.OnceValue(func() map[string]string {
	zr, err := gzip.NewReader(bytes.NewReader(glossaryGz))
	if err != nil {
		panic("enrich: the embedded glossary is not gzip: " + err.Error())
	}
	m := make(map[string]string, 64000)
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		if word, senses, ok := strings.Cut(sc.Text(), "\t"); ok {
			m[word] = senses
		}
	}
	if err := sc.Err(); err != nil {
		panic("enrich: the embedded glossary is unreadable: " + err.Error())
	}
	return m
})

// Gloss is the English senses of the Chinese words of text, "; "-separated in the order
// the words appear, each word once: an English query finds a Chinese tool by them ("rail
// station" for 车站), which the tool's English identifiers alone often do not allow. Each run
// of Chinese characters is cut into the glossary's words greedily, longest first (three,
// then two characters); characters no word covers are skipped. Text without Chinese has no
// gloss ("").
func Gloss(text string) string {
	g := glossary()
	var out []string
	seen := map[string]bool{}
	run := []rune{}
	flush := func() {
		for i := 0; i < len(run) && len(out) < maxGlosses; {
			n := 0
			for l := min(3, len(run)-i); l >= 2; l-- {
				w := string(run[i : i+l])
				if senses, ok := g[w]; ok {
					if !seen[w] {
						seen[w] = true
						out = append(out, senses)
					}
					n = l
					break
				}
			}
			if n == 0 {
				n = 1
			}
			i += n
		}
		run = run[:0]
	}
	for _, r := range text {
		if isHan(r) {
			run = append(run, r)
		} else {
			flush()
		}
	}
	flush()
	return strings.Join(out, "; ")
}

// isHan reports whether r is a CJK ideograph (the glossary's characters).
func isHan(r rune) bool {
	return (r >= 0x3400 && r <= 0x4dbf) || (r >= 0x4e00 && r <= 0x9fff) || (r >= 0xf900 && r <= 0xfaff)
}
