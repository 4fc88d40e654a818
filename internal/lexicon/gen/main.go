// Command gen turns the WordNet 3.0 database of Debian's wordnet-base package into the
// compact lexicon internal/lexicon embeds (wordnet.txt.gz): run by `make lexicon`.
//
//	go run ./internal/lexicon/gen -wordnet /usr/share/wordnet -out internal/lexicon/wordnet.txt.gz
//
// What it keeps: nouns, verbs and adjectives; for every lemma of one word its first
// maxSenses senses of each part of speech, in WordNet's sense order (most frequent first,
// from the tagged corpus counts); for each kept synset its one-word lemmas, its direct
// hypernyms (also kept, so a hypernym's words can be read) and the first content words of
// its gloss; and the irregular forms of the exception lists (mice → mouse). The output is
// a gzip'd text file whose bytes depend on the input files only (no timestamp in the gzip
// header), so running it twice writes the same file.
package main

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

const (
	maxSenses     = 3 // senses kept per lemma and part of speech
	maxGlossWords = 8 // content words kept from a gloss
)

// poses are the parts of speech kept: file suffix and the letter used in the output.
var poses = []struct{ file, letter string }{{"noun", "n"}, {"verb", "v"}, {"adj", "a"}}

type synset struct {
	key       string // pos letter + offset
	words     []string
	hypernyms []string // keys
	gloss     []string
}

func main() {
	dir := flag.String("wordnet", "/usr/share/wordnet", "directory of the WordNet database files")
	out := flag.String("out", "internal/lexicon/wordnet.txt.gz", "file to write")
	flag.Parse()
	if err := run(*dir, *out); err != nil {
		log.Fatal(err)
	}
}

// lexicon is what gen writes: the kept synsets, the senses of every lemma and the
// irregular forms.
type lexicon struct {
	synsets map[string]*synset
	keys    []string       // the kept synsets' keys, sorted: a synset's id is its index
	id      map[string]int // key -> id
	lemmas  map[string][]string
	exc     map[string]string // irregular form -> base
}

func run(dir, out string) error {
	lx, err := read(dir)
	if err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	zw, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(zw)
	lx.write(w)
	if err := w.Flush(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	log.Printf("wrote %s: %d synsets, %d lemmas, %d irregular forms", out, len(lx.keys), len(lx.lemmas), len(lx.exc))
	return nil
}

// read reads the WordNet database in dir and keeps, for every lemma, its first senses and
// their synsets with their direct hypernyms.
func read(dir string) (lexicon, error) {
	synsets := map[string]*synset{}
	for _, p := range poses {
		if err := readData(filepath.Join(dir, "data."+p.file), p.letter, synsets); err != nil {
			return lexicon{}, err
		}
	}
	// lemma -> part of speech -> synset keys in sense order
	senses := map[string]map[string][]string{}
	for _, p := range poses {
		if err := readIndex(filepath.Join(dir, "index."+p.file), p.letter, senses); err != nil {
			return lexicon{}, err
		}
	}
	counts, err := readCounts(filepath.Join(dir, "cntlist.rev"))
	if err != nil {
		return lexicon{}, err
	}
	lemmas := orderSenses(senses, counts)
	keep := map[string]bool{}
	for _, keys := range lemmas {
		for _, k := range keys {
			keep[k] = true
			if s := synsets[k]; s != nil {
				for _, h := range s.hypernyms {
					keep[h] = true
				}
			}
		}
	}
	keys := make([]string, 0, len(keep))
	for k := range keep {
		if synsets[k] != nil {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	id := make(map[string]int, len(keys))
	for i, k := range keys {
		id[k] = i
	}
	exc := map[string]string{}
	for _, p := range poses {
		if err := readExceptions(filepath.Join(dir, p.file+".exc"), exc); err != nil {
			return lexicon{}, err
		}
	}
	return lexicon{synsets: synsets, keys: keys, id: id, lemmas: lemmas, exc: exc}, nil
}

// write writes the lexicon's lines: its synsets (S), lemmas (L) and irregular forms (E),
// each kind sorted. Errors are w's, reported by its Flush.
func (lx lexicon) write(w *bufio.Writer) {
	fmt.Fprintf(w, "# WordNet 3.0 (Princeton University), reduced by internal/lexicon/gen; licence in internal/lexicon/LICENSE-WordNet\n")
	fmt.Fprintf(w, "# S pos hypernym-ids words gloss-words (the line's order is its id); L lemma synset-ids; E form base\n")
	for _, k := range lx.keys {
		s := lx.synsets[k]
		var hs []string
		for _, h := range s.hypernyms {
			if j, ok := lx.id[h]; ok {
				hs = append(hs, strconv.Itoa(j))
			}
		}
		fmt.Fprintf(w, "S\t%s\t%s\t%s\t%s\n", k[:1], strings.Join(hs, " "), strings.Join(s.words, " "), strings.Join(s.gloss, " "))
	}
	names := make([]string, 0, len(lx.lemmas))
	for l := range lx.lemmas {
		names = append(names, l)
	}
	sort.Strings(names)
	for _, l := range names {
		var ids []string
		for _, k := range lx.lemmas[l] {
			if j, ok := lx.id[k]; ok {
				ids = append(ids, strconv.Itoa(j))
			}
		}
		if len(ids) > 0 {
			fmt.Fprintf(w, "L\t%s\t%s\n", l, strings.Join(ids, " "))
		}
	}
	forms := make([]string, 0, len(lx.exc))
	for form := range lx.exc {
		forms = append(forms, form)
	}
	sort.Strings(forms)
	for _, form := range forms {
		fmt.Fprintf(w, "E\t%s\t%s\n", form, lx.exc[form])
	}
}

// oneWord is a lemma without spaces or underscores, lowercase letters only.
func oneWord(s string) bool {
	if len(s) < 2 {
		return false
	}
	for _, r := range s {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

// readData reads a data.POS file: "offset lex_filenum ss_type w_cnt word lex_id ... p_cnt
// [ptr offset pos source/target]... | gloss". Adjective satellites (ss_type s) are
// adjectives.
func readData(path, letter string, synsets map[string]*synset) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, " ") {
			continue // the licence header
		}
		body, gloss, _ := strings.Cut(line, " | ")
		fs := strings.Fields(body)
		wcnt, err := strconv.ParseInt(fs[3], 16, 32)
		if err != nil {
			return fmt.Errorf("%s: %q: %w", path, fs[0], err)
		}
		s := &synset{key: letter + fs[0]}
		i := 4
		for range wcnt {
			w := strings.ToLower(fs[i])
			if j := strings.IndexByte(w, '('); j > 0 {
				w = w[:j] // adjective markers: "galore(ip)"
			}
			if oneWord(w) {
				s.words = append(s.words, w)
			}
			i += 2
		}
		pcnt, err := strconv.Atoi(fs[i])
		if err != nil {
			return fmt.Errorf("%s: %q: %w", path, fs[0], err)
		}
		i++
		for range pcnt {
			sym, off, pos := fs[i], fs[i+1], fs[i+2]
			if (sym == "@" || sym == "@i") && (pos == "n" || pos == "v") {
				s.hypernyms = append(s.hypernyms, pos+off)
			}
			i += 4
		}
		s.gloss = glossWords(gloss, s.words)
		synsets[s.key] = s
	}
	return sc.Err()
}

// glossWords are the first content words of a gloss's definition (before its examples),
// without the synset's own words.
func glossWords(gloss string, own []string) []string {
	def, _, _ := strings.Cut(gloss, ";")
	var out []string
	seen := map[string]bool{}
	for _, w := range own {
		seen[w] = true
	}
	for _, w := range strings.FieldsFunc(strings.ToLower(def), func(r rune) bool { return r < 'a' || r > 'z' }) {
		if len(w) < 3 || glossStop[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
		if len(out) == maxGlossWords {
			break
		}
	}
	return out
}

// orderSenses puts each lemma's parts of speech in the order of how often the lemma was
// tagged with them in WordNet's corpus (cntlist.rev; "buy" is a verb before a noun,
// "weather" a noun before a verb), nouns, verbs, adjectives on a tie, and joins their senses.
func orderSenses(senses map[string]map[string][]string, counts map[string]map[string]int) map[string][]string {
	out := make(map[string][]string, len(senses))
	for lemma, byPOS := range senses {
		order := []string{"n", "v", "a"}
		sort.SliceStable(order, func(i, j int) bool { return counts[lemma][order[i]] > counts[lemma][order[j]] })
		for _, p := range order {
			out[lemma] = append(out[lemma], byPOS[p]...)
		}
	}
	return out
}

// readCounts sums cntlist.rev's tag counts ("sense_key sense_number tag_cnt", the key
// "lemma%ss_type:...") by lemma and part of speech (ss_type 1 noun, 2 verb, 3 and 5
// adjective).
func readCounts(path string) (map[string]map[string]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 3 {
			continue
		}
		lemma, key, ok := strings.Cut(fs[0], "%")
		if !ok || key == "" {
			continue
		}
		pos := map[byte]string{'1': "n", '2': "v", '3': "a", '5': "a"}[key[0]]
		n, err := strconv.Atoi(fs[2])
		if pos == "" || err != nil {
			continue
		}
		if out[lemma] == nil {
			out[lemma] = map[string]int{}
		}
		out[lemma][pos] += n
	}
	return out, sc.Err()
}

// readIndex reads an index.POS file: "lemma pos synset_cnt p_cnt [ptr]... sense_cnt
// tagsense_cnt offset...", offsets in sense order.
func readIndex(path, letter string, senses map[string]map[string][]string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, " ") {
			continue
		}
		fs := strings.Fields(line)
		if !oneWord(fs[0]) {
			continue
		}
		cnt, err := strconv.Atoi(fs[2])
		if err != nil {
			return fmt.Errorf("%s: %q: %w", path, fs[0], err)
		}
		offsets := fs[len(fs)-cnt:]
		if senses[fs[0]] == nil {
			senses[fs[0]] = map[string][]string{}
		}
		for _, off := range offsets[:min(len(offsets), maxSenses)] {
			senses[fs[0]][letter] = append(senses[fs[0]][letter], letter+off)
		}
	}
	return sc.Err()
}

// readExceptions reads a POS.exc file: "form base [base...]"; the first base is kept, and a
// form already mapped by an earlier part of speech keeps its mapping.
func readExceptions(path string, exc map[string]string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 2 || !oneWord(fs[0]) || !oneWord(fs[1]) {
			continue
		}
		if _, ok := exc[fs[0]]; !ok {
			exc[fs[0]] = fs[1]
		}
	}
	return sc.Err()
}

// glossStop are function words and the vague words of definitions.
var glossStop = wordSet(`the and for that with from into onto upon this these those which who whom whose
	what when where while are was were been being has have had having not but its their them they his her
	him she our your you any all some such one two each other more most than then there here very also
	only just can may might must shall should will would could used use using especially usually often
	something someone somebody anything thing things person people act way manner state quality
	make made makes making give given something kind part form certain particular
	etc about over under out off per via without within between among through`)

func wordSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}
