package locks_test

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/locks"
)

// TestLockKeysAreListed: every advisory lock key written as a number in the SQL of the
// migrations, the queries and the functions is one of internal/locks/locks.go (current
// or retired), Go code writes none as a number (it uses those constants), and only the
// test template's builder (internal/pgtest) and old migrations take a session-level one.
func TestLockKeysAreListed(t *testing.T) {
	known := map[int64]bool{}
	for _, k := range []int64{locks.Source, locks.TestTemplate, locks.EmbeddingSpace, locks.MemoryTool, locks.LexicalIndexer, locks.ApplyFunctions} {
		if known[k] {
			t.Errorf("lock key %d listed twice", k)
		}
		known[k] = true
	}
	for k := range locks.Retired {
		if known[k] {
			t.Errorf("retired lock key %d is also a current one", k)
		}
		known[k] = true
	}
	lock := regexp.MustCompile(`pg_(?:try_)?advisory_(?:xact_)?lock(?:_shared)?\(\s*(\d+)`)
	// a session-level lock outlives its transaction: behind pgbouncer in transaction mode
	// (docs/scaling.md) it and its release may reach different server connections
	session := regexp.MustCompile(`pg_(?:try_)?advisory_lock(?:_shared)?\(|pg_advisory_unlock`)
	seen := 0
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "../.." || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		ext := filepath.Ext(path)
		if d.IsDir() || (ext != ".sql" && ext != ".go") || strings.HasSuffix(path, "_test.go") ||
			filepath.Base(path) == "schema.sql" || strings.HasSuffix(path, ".sql.go") {
			return nil // schema.sql is a dump, *.sql.go are sqlc's copies of sql/queries
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if session.Match(b) && !strings.Contains(path, "internal/pgtest") && !strings.HasPrefix(path, "../../migrations/") {
			t.Errorf("%s: takes a session-level advisory lock; take a transaction-level one (pg_advisory_xact_lock)", path)
		}
		for _, m := range lock.FindAllSubmatch(b, -1) {
			seen++
			k, _ := strconv.ParseInt(string(m[1]), 10, 64)
			if !known[k] {
				t.Errorf("%s: advisory lock key %d is not in internal/locks/locks.go", path, k)
			}
			if ext == ".go" {
				t.Errorf("%s: advisory lock key %d written as a number; use its constant of locks.go", path, k)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen == 0 {
		t.Fatal("no advisory lock found in SQL: the pattern is wrong")
	}
}

// TestImportsNothingOfTheProject: the keys are a leaf, so any package can name one without
// depending on another package's code.
func TestImportsNothingOfTheProject(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if strings.HasPrefix(imp, "github.com/toolgate/toolgate/") {
			t.Errorf("internal/locks imports %s", imp)
		}
	}
}
