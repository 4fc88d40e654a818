// Package pgtest gives each test its own fresh, fully migrated PostgreSQL database, cloned
// from a template database that is built once per schema version. Tests using it can run
// in parallel and never see each other's rows.
//
// The server is found through TOOLGATE_TEST_DATABASE_URL (default: the cluster made by
// scripts/pg-setup.sh, postgres://postgres@127.0.0.1:55432/postgres).
package pgtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/locks"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/migrations"
	"github.com/toolgate/toolgate/sql/functions"
)

const defaultURL = "postgres://postgres@127.0.0.1:55432/postgres?sslmode=disable"

// ServerURL is the URL of the maintenance database of the test server.
func ServerURL() string {
	if u := os.Getenv("TOOLGATE_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return defaultURL
}

// URLFor returns the server URL pointed at database name.
func URLFor(name string) string {
	u, err := url.Parse(ServerURL())
	if err != nil {
		panic(fmt.Sprintf("pgtest: bad TOOLGATE_TEST_DATABASE_URL: %v", err))
	}
	u.Path = "/" + name
	return u.String()
}

// NewDB creates a fresh migrated database for t, dropped when the test ends, and returns
// its URL.
func NewDB(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	admin, err := pgx.Connect(ctx, ServerURL())
	if err != nil {
		t.Fatalf("pgtest: connect to test server (run scripts/pg-setup.sh): %v", err)
	}
	defer admin.Close(ctx)

	tmpl, err := ensureTemplate(ctx, admin)
	if err != nil {
		t.Fatalf("pgtest: template: %v", err)
	}
	name := "tg_test_" + randomHex(8)
	if err := createFrom(ctx, admin, name, tmpl); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, ServerURL())
		if err != nil {
			t.Logf("pgtest: drop %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name)); err != nil {
			t.Logf("pgtest: drop %s: %v", name, err)
		}
	})
	return URLFor(name)
}

// NewPool creates a fresh migrated database for t and returns a pool on it, closed when
// the test ends.
func NewPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	dbURL := NewDB(t)
	pool, err := postgres.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// ensureTemplate builds (once per schema content, across concurrent test processes) a
// migrated template database and returns its name.
func ensureTemplate(ctx context.Context, admin *pgx.Conn) (string, error) {
	name := "tg_template_" + schemaDigest()
	// Serialize template creation across test processes; other processes wait here and
	// then find the template ready.
	if _, err := admin.Exec(ctx, `SELECT pg_advisory_lock($1)`, locks.TestTemplate); err != nil {
		return "", err
	}
	defer admin.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, locks.TestTemplate) //nolint:errcheck

	var exists bool
	if err := admin.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1 AND datistemplate)`, name).Scan(&exists); err != nil {
		return "", err
	}
	if exists {
		return name, nil
	}
	build := name + "_build"
	if _, err := admin.Exec(ctx, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", build)); err != nil {
		return "", err
	}
	if _, err := admin.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s", build)); err != nil {
		return "", err
	}
	pool, err := postgres.Connect(ctx, URLFor(build))
	if err != nil {
		return "", err
	}
	err = postgres.MigrateUp(ctx, pool)
	pool.Close()
	if err != nil {
		return "", err
	}
	for _, stmt := range []string{
		fmt.Sprintf("ALTER DATABASE %s RENAME TO %s", build, name),
		fmt.Sprintf("ALTER DATABASE %s WITH IS_TEMPLATE true", name),
	} {
		if _, err := admin.Exec(ctx, stmt); err != nil {
			return "", err
		}
	}
	return name, nil
}

func createFrom(ctx context.Context, admin *pgx.Conn, name, tmpl string) error {
	var err error
	// CREATE DATABASE fails while another session briefly holds the template; retry.
	for range 20 {
		_, err = admin.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", name, tmpl))
		if err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// schemaDigest fingerprints the embedded migrations and sql/functions, so a changed schema
// gets a new template.
func schemaDigest() string {
	h := sha256.New()
	for _, fsys := range []fs.FS{migrations.FS, functions.FS} {
		entries, _ := fs.ReadDir(fsys, ".")
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		for _, n := range names {
			b, _ := fs.ReadFile(fsys, n)
			h.Write([]byte(n))
			h.Write(b)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
