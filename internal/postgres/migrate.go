package postgres

import (
	"context"
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

	"github.com/toolgate/toolgate/migrations"
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

// MigrateUp applies toolgate's migrations and then River's.
func MigrateUp(ctx context.Context, pool *pgxpool.Pool) error {
	m, done, err := newMigrate(pool)
	if err != nil {
		return err
	}
	defer done()
	if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrate up: %w", err)
	}
	rm, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return err
	}
	if _, err := rm.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate river: %w", err)
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
