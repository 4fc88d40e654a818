package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/golang-migrate/migrate/v4"
	pgxmigrate "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/toolgate/toolgate/internal/locks"
	"github.com/toolgate/toolgate/migrations"
	"github.com/toolgate/toolgate/sql/functions"
)

// MigrationStatus is where the schema stands.
type MigrationStatus struct {
	Version      uint // 0 when nothing is applied
	Dirty        bool
	Latest       uint // highest version embedded in this binary
	RiverCurrent bool // River's tables are at the version this binary's River expects
}

// LatestVersion is the highest migration version embedded in the binary.
func LatestVersion() uint {
	entries, _ := fs.ReadDir(migrations.FS, ".")
	var versions []int
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".up.sql"); ok {
			if v, err := strconv.Atoi(strings.SplitN(n, "_", 2)[0]); err == nil {
				versions = append(versions, v)
			}
		}
	}
	if len(versions) == 0 {
		return 0
	}
	sort.Ints(versions)
	return uint(versions[len(versions)-1])
}

func newMigrate(pool *pgxpool.Pool) (*migrate.Migrate, func(), error) {
	src, err := iofs.New(migrations.FS, ".")
	if err != nil {
		return nil, nil, err
	}
	sqlDB := stdlib.OpenDBFromPool(pool)
	drv, err := pgxmigrate.WithInstance(sqlDB, &pgxmigrate.Config{})
	if err != nil {
		sqlDB.Close()
		return nil, nil, fmt.Errorf("migrate driver: %w", err)
	}
	m, err := migrate.NewWithInstance("iofs", src, "pgx5", drv)
	if err != nil {
		sqlDB.Close()
		return nil, nil, err
	}
	// Close releases the driver's dedicated connection back to pool; without it the pool
	// could never close.
	return m, func() { m.Close() }, nil
}

// MigrateUp applies toolgate's migrations, then the function files of sql/functions that
// changed, then River's migrations.
func MigrateUp(ctx context.Context, pool *pgxpool.Pool) error {
	m, done, err := newMigrate(pool)
	if err != nil {
		return err
	}
	defer done()
	err = m.Up()
	if err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrate up: %w", err)
	}
	changed := err == nil
	// A migration that ran may have made an older copy of a function or view whose live
	// definition is in sql/functions (a migration is history and keeps creating what it
	// created, for example 0016 after a migrate down to 0015 and up again): then every file
	// is applied again, changed or not.
	if err := applyFunctions(ctx, pool, changed); err != nil {
		return err
	}
	rm, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return err
	}
	if _, err := rm.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	if changed {
		// the first migration creates the vector extension: a connection opened before it
		// knows no pgvector type (nor one opened before a migrate down removed it, whose
		// oids are gone); the pool replaces them all
		pool.Reset()
	}
	return nil
}

// MigrateDown rolls toolgate's schema back by steps migrations, or entirely when steps is 0,
// in which case River's tables are removed too.
func MigrateDown(ctx context.Context, pool *pgxpool.Pool, steps int) error {
	m, done, err := newMigrate(pool)
	if err != nil {
		return err
	}
	defer done()
	if steps > 0 {
		err = m.Steps(-steps)
	} else {
		err = m.Down()
	}
	if err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrate down: %w", err)
	}
	if steps > 0 {
		return nil
	}
	rm, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return err
	}
	if _, err := rm.Migrate(ctx, rivermigrate.DirectionDown, &rivermigrate.MigrateOpts{TargetVersion: -1}); err != nil {
		return fmt.Errorf("migrate river down: %w", err)
	}
	return nil
}

// MigrateDownTo rolls toolgate's schema back to version (one of the migrations' numbers),
// whatever numbers are missing in between (0015 and 0016 belong to other branches).
// Tests use it to make a state of an older schema.
func MigrateDownTo(ctx context.Context, pool *pgxpool.Pool, version uint) error {
	m, done, err := newMigrate(pool)
	if err != nil {
		return err
	}
	defer done()
	if err := m.Migrate(version); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrate down to %d: %w", version, err)
	}
	return nil
}

// Status reports the applied schema version of toolgate and whether River's is current.
func Status(ctx context.Context, pool *pgxpool.Pool) (MigrationStatus, error) {
	st := MigrationStatus{Latest: LatestVersion()}
	var version int64
	err := pool.QueryRow(ctx, `SELECT version, dirty FROM schema_migrations LIMIT 1`).Scan(&version, &st.Dirty)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case isUndefinedTable(err):
	case err != nil:
		return st, err
	default:
		st.Version = uint(version)
	}
	rm, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return st, err
	}
	res, err := rm.Validate(ctx, nil)
	if err != nil {
		// River's migration table is missing before the first `migrate up`.
		if isUndefinedTable(err) {
			return st, nil
		}
		return st, err
	}
	st.RiverCurrent = res.OK
	return st, nil
}

// isUndefinedTable reports a query on a table that does not exist yet (before the first
// migration).
func isUndefinedTable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == pgerrcode.UndefinedTable
}

// applyFunctions runs every file of sql/functions whose content differs from the one last
// applied (schema_functions), or every file when all is set, each in its own transaction
// with its record. Files run in name order, so a file may use only the tables and its own
// functions (or those of a file sorting before it). Concurrent callers serialize on an
// advisory lock and the later ones find nothing to do. A file left unchanged is not run
// again, so a process start that migrates nothing takes no lock on the tables its triggers
// are on.
func applyFunctions(ctx context.Context, pool *pgxpool.Pool, all bool) error {
	entries, err := fs.ReadDir(functions.FS, ".")
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		body, err := fs.ReadFile(functions.FS, e.Name())
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		digest := hex.EncodeToString(sum[:])
		err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", locks.ApplyFunctions); err != nil {
				return err
			}
			var applied string
			err := tx.QueryRow(ctx, "SELECT sha256 FROM schema_functions WHERE file = $1", e.Name()).Scan(&applied)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
			if applied == digest && !all {
				return nil
			}
			// Raw SQL: the file is this binary's own embedded schema code.
			if _, err := tx.Exec(ctx, string(body)); err != nil {
				return err
			}
			_, err = tx.Exec(ctx, `INSERT INTO schema_functions (file, sha256) VALUES ($1, $2)
				ON CONFLICT (file) DO UPDATE SET sha256 = excluded.sha256, applied_at = now()`, e.Name(), digest)
			return err
		})
		if err != nil {
			return fmt.Errorf("apply sql/functions/%s: %w", e.Name(), err)
		}
	}
	return nil
}
