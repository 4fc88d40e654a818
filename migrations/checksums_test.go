package migrations

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"strings"
	"testing"
)

// A released migration is history: databases have run it, and golang-migrate never runs it
// again, so an edit would only make new databases differ from old ones. checksums.txt pins
// the SHA-256 of every migration file (sha256sum's format); a change goes into a new
// migration, and a function or view whose definition changes goes into sql/functions.
func TestReleasedMigrationsUnchanged(t *testing.T) {
	pinned := readChecksums(t)
	entries, err := fs.ReadDir(FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	present := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		present[name] = true
		body, err := fs.ReadFile(FS, name)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(body)
		got := hex.EncodeToString(sum[:])
		want, ok := pinned[name]
		switch {
		case !ok:
			t.Errorf("migration %s has no checksum: a new migration is pinned in the commit that adds it, "+
				"with `cd migrations && sha256sum %s >> checksums.txt`", name, name)
		case got != want:
			t.Errorf("migration %s was edited; released migrations are history — add a new one "+
				"(and put live functions and views in sql/functions)", name)
		}
	}
	for name := range pinned {
		if !present[name] {
			t.Errorf("migration %s was removed; released migrations are history — add a new one", name)
		}
	}
}

// readChecksums reads checksums.txt: lines of "<sha256>  <file>", as sha256sum prints them.
func readChecksums(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("checksums.txt")
	if err != nil {
		t.Fatal(err)
	}
	pinned := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		sum, name, ok := strings.Cut(line, "  ")
		if !ok || len(sum) != 64 {
			t.Fatalf("checksums.txt:%d: %q is not `<sha256>  <file>`", n, line)
		}
		if _, dup := pinned[name]; dup {
			t.Fatalf("checksums.txt:%d: %s is listed twice", n, name)
		}
		pinned[name] = sum
	}
	return pinned
}
