package postgres_test

import (
	"bytes"
	"context"
	"flag"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/migrations"
)

var updateSchema = flag.Bool("update-schema", false, "rewrite sql/schema.sql from the migrations (make schema)")

// schemaFile is the committed dump of the schema the migrations and sql/functions build.
const schemaFile = "../../sql/schema.sql"

// The committed schema dump must be what the migrations make: a migration that changes the
// schema without its dump (or a hand edit of the dump) fails here. `make schema` rewrites it.
func TestSchemaDumpMatchesMigrations(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDB(t) // a fresh database cloned from the migrated template
	dump := pgDump(t, url)
	if *updateSchema {
		if err := os.WriteFile(schemaFile, dump, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatalf("%v (make schema writes it)", err)
	}
	if !bytes.Equal(dump, want) {
		got, wantLines := strings.Split(string(dump), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < max(len(got), len(wantLines)); i++ {
			var g, w string
			if i < len(got) {
				g = got[i]
			}
			if i < len(wantLines) {
				w = wantLines[i]
			}
			if g != w {
				t.Fatalf("sql/schema.sql differs from the migrated schema at line %d:\n  migrations: %q\n  committed:  %q\nrun `make schema` and review the diff", i+1, g, w)
			}
		}
	}
}

// pgDump returns the schema of the database at url as pg_dump prints it, without what
// changes from one pg_dump build, run or day to another (versions, the \restrict key, the
// retrieval log's partitions).
func pgDump(t *testing.T, url string) []byte {
	t.Helper()
	bin, err := exec.LookPath("pg_dump")
	if err != nil {
		t.Fatalf("pg_dump (PostgreSQL 15 client, installed by scripts/pg-setup.sh): %v", err)
	}
	// The retrieval log's monthly partitions depend on the day the migration ran.
	out, err := exec.CommandContext(context.Background(), bin, "--schema-only", "--no-owner", "--no-privileges",
		"--exclude-table=public.search_log_[0-9]*", url).Output()
	if err != nil {
		t.Fatalf("pg_dump: %v", err)
	}
	var b bytes.Buffer
	for line := range strings.SplitSeq(string(out), "\n") {
		if strings.HasPrefix(line, "-- Dumped from") || strings.HasPrefix(line, "-- Dumped by") ||
			strings.HasPrefix(line, `\restrict`) || strings.HasPrefix(line, `\unrestrict`) {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// sql/functions files are applied again only when they change: a second MigrateUp (every
// serve start) leaves them, and the locks re-creating their triggers would take, alone.
func TestFunctionFilesAppliedOnlyWhenChanged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	var before, after time.Time
	if err := pool.QueryRow(ctx, `SELECT applied_at FROM schema_functions WHERE file = 'lexical.sql'`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	if err := postgres.MigrateUp(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT applied_at FROM schema_functions WHERE file = 'lexical.sql'`).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if !after.Equal(before) {
		t.Fatalf("lexical.sql applied again (%v, then %v) though unchanged", before, after)
	}
	// a changed file (here: a record of another content) is applied again
	if _, err := pool.Exec(ctx, `UPDATE schema_functions SET sha256 = 'old' WHERE file = 'lexical.sql'`); err != nil {
		t.Fatal(err)
	}
	if err := postgres.MigrateUp(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT applied_at FROM schema_functions WHERE file = 'lexical.sql'`).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if !after.After(before) {
		t.Fatal("a changed lexical.sql was not applied again")
	}
}

// A migration that runs may re-create an older copy of what sql/functions defines (a released
// migration keeps creating what it created): after any migration every file is applied again,
// so the live definitions win. Here a function is left with another body, which only the
// file can restore, and one migration is run down and up.
func TestFunctionFilesAppliedAgainAfterAMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	if _, err := pool.Exec(ctx, `CREATE OR REPLACE FUNCTION toolgate_name_key(s text) RETURNS text
		LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$ SELECT 'stale' $$`); err != nil {
		t.Fatal(err)
	}
	if err := postgres.MigrateDownTo(ctx, pool, previousVersion(t)); err != nil {
		t.Fatal(err)
	}
	if err := postgres.MigrateUp(ctx, pool); err != nil {
		t.Fatal(err)
	}
	var key string
	if err := pool.QueryRow(ctx, `SELECT toolgate_name_key('getWeather')`).Scan(&key); err != nil {
		t.Fatal(err)
	}
	if key != "get weather" {
		t.Fatalf("toolgate_name_key('getWeather') = %q after a migration: sql/functions was not applied again", key)
	}
}

// previousVersion is the version of the migration before the latest one (numbers may skip:
// a number is given out before its migration is released).
func previousVersion(t *testing.T) uint {
	t.Helper()
	entries, err := fs.ReadDir(migrations.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	prev := uint(0)
	for _, e := range entries {
		n, ok := strings.CutSuffix(e.Name(), ".up.sql")
		if !ok {
			continue
		}
		v, err := strconv.Atoi(strings.SplitN(n, "_", 2)[0])
		if err == nil && uint(v) < postgres.LatestVersion() && uint(v) > prev {
			prev = uint(v)
		}
	}
	return prev
}
