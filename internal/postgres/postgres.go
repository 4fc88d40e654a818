// Package postgres opens toolgate's connection pool, applies the schema (toolgate's own
// golang-migrate files and River's tables) and reports whether the database is ready.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	pgxvec "github.com/pgvector/pgvector-go/pgx"
)

// DefaultConnectTimeout bounds each new connection (TCP connect and startup) when the
// database URL sets no connect_timeout: while PostgreSQL is down a request that needs a
// new connection fails after this long instead of waiting for the operating system's
// TCP timeout, so the API answers 503 quickly.
const DefaultConnectTimeout = 5 * time.Second

// Connect opens a pool to url and checks that the server answers. Every connection
// knows the pgvector types when the extension is installed. Options tune the pool.
func Connect(ctx context.Context, url string, opts ...Option) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	for _, o := range opts {
		o(cfg)
	}
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		// The extension is created by the first migration, so a connection made
		// before it (by `migrate up` itself) must still work.
		var present bool
		if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_type WHERE typname = 'vector')`).Scan(&present); err != nil {
			return err
		}
		if !present {
			return nil
		}
		return pgxvec.RegisterTypes(ctx, conn)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return pool, nil
}

// NotReadyError says why the database cannot serve toolgate yet. Reason is fit for anyone
// (the public /readyz shows it); Err, the driver's error, names the server, user and
// database and is for the operator only.
type NotReadyError struct {
	Reason string
	Err    error
}

func (e *NotReadyError) Error() string {
	if e.Err == nil {
		return "database not ready: " + e.Reason
	}
	return "database not ready: " + e.Reason + ": " + e.Err.Error()
}

func (e *NotReadyError) Unwrap() error { return e.Err }

// Public is the error without the driver's words.
func (e *NotReadyError) Public() string { return "database not ready: " + e.Reason }

// Ready checks that the database answers, that toolgate's and River's migrations are
// current and that pgvector is installed.
func Ready(ctx context.Context, pool *pgxpool.Pool) error {
	if err := pool.Ping(ctx); err != nil {
		return &NotReadyError{Reason: "unreachable", Err: err}
	}
	st, err := Status(ctx, pool)
	if err != nil {
		return &NotReadyError{Reason: "cannot read the migration state", Err: err}
	}
	switch {
	case st.Dirty:
		return &NotReadyError{Reason: fmt.Sprintf("migration %d is dirty", st.Version)}
	case st.Version != st.Latest:
		return &NotReadyError{Reason: fmt.Sprintf("schema at version %d, binary expects %d", st.Version, st.Latest)}
	case !st.RiverCurrent:
		return &NotReadyError{Reason: "river tables are not migrated"}
	}
	// A system-catalog query: sqlc does not model pg_extension.
	var vector bool
	if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector')`).Scan(&vector); err != nil {
		return &NotReadyError{Reason: "cannot check for pgvector", Err: err}
	}
	if !vector {
		return &NotReadyError{Reason: "pgvector extension missing"}
	}
	return nil
}

// IsUnavailable reports whether err means the database could not be reached at all,
// as opposed to a query that failed: not ready (see Ready), a failed connection attempt
// (also what a pool acquire returns when it cannot connect), or a server shutting down,
// starting up or refusing connections (SQLSTATE class 08, 57P01-57P03). Only pgconn's
// own error types count: a bare EOF or network error may come from anything (a request
// body, a provider) and stays an internal error.
func IsUnavailable(err error) bool {
	var (
		nr *NotReadyError
		ce *pgconn.ConnectError
		pe *pgconn.PgError
	)
	switch {
	case err == nil:
		return false
	case errors.As(err, &nr), errors.As(err, &ce):
		return true
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		// the caller gave up (or its deadline passed) on a query that was running
		return false
	case errors.As(err, &pe):
		return pgerrcode.IsConnectionException(pe.Code) || pe.Code == pgerrcode.AdminShutdown ||
			pe.Code == pgerrcode.CrashShutdown || pe.Code == pgerrcode.CannotConnectNow
	}
	return false
}
