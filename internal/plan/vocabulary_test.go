package plan

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestLoadVocabulary(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	m, err := LoadVocabulary(write("ok.json", `{"AAPL": "Apple", "Google": "Alphabet"}`))
	if err != nil || len(m) != 2 || m["AAPL"] != "Apple" {
		t.Fatalf("%v, %v", m, err)
	}
	var ve *VocabularyError
	for _, body := range []string{`["AAPL"]`, `{"AAPL": 1}`, `{"": "Apple"}`, `{"AAPL": " "}`} {
		if _, err := LoadVocabulary(write("bad.json", body)); !errors.As(err, &ve) {
			t.Errorf("%s: err = %v", body, err)
		}
	}
	if _, err := LoadVocabulary(filepath.Join(dir, "missing.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: err = %v", err)
	}
}
