package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// A Pool sizes the connection pool of a PostgreSQL database
// (Options.Pool). A zero field keeps database/sql's default for it: no
// limit on open connections, 2 kept idle, none closed for its age or
// idle time. SQLite databases keep those defaults whatever Pool says:
// they are perfbot compare's files, where one process writes and
// busy_timeout, not a pool, serialises it.
type Pool struct {
	// MaxOpen bounds the connections open at once, in use or idle; a
	// query beyond it waits for one to come free. At least 2 when set:
	// migrations hold one connection for their lock while they apply
	// on another.
	MaxOpen int
	// MaxIdle is how many connections stay open between queries, ready
	// for the next one; a connection returned beyond it is closed. At
	// most MaxOpen. A burst that needs more connections than this opens
	// new ones every time: a PostgreSQL connection costs a process fork
	// and an authentication, milliseconds on a busy machine.
	MaxIdle int
	// MaxLifetime closes a connection this long after it was opened
	// (once it is next idle).
	MaxLifetime time.Duration
	// MaxIdleTime closes a connection idle this long.
	MaxIdleTime time.Duration
}

// ErrPoolTooLarge is returned by Open when Pool.MaxOpen is more than the
// PostgreSQL server lets the connecting role open: its max_connections
// (less the slots reserved for superusers, to a role that is not one),
// or a CONNECTION LIMIT of the role or of the database.
var ErrPoolTooLarge = errors.New("connection pool larger than the server allows")

// check refuses a Pool that cannot work.
func (p Pool) check() error {
	switch {
	case p.MaxOpen < 0:
		return fmt.Errorf("connection pool: MaxOpen %d is negative", p.MaxOpen)
	case p.MaxOpen == 1:
		return errors.New("connection pool: MaxOpen 1 cannot work: migrations hold one connection for their lock while they apply on another; give at least 2")
	case p.MaxIdle < 0:
		return fmt.Errorf("connection pool: MaxIdle %d is negative", p.MaxIdle)
	case p.MaxOpen > 0 && p.MaxIdle > p.MaxOpen:
		return fmt.Errorf("connection pool: MaxIdle %d is more than MaxOpen %d", p.MaxIdle, p.MaxOpen)
	case p.MaxLifetime < 0:
		return fmt.Errorf("connection pool: MaxLifetime %v is negative", p.MaxLifetime)
	case p.MaxIdleTime < 0:
		return fmt.Errorf("connection pool: MaxIdleTime %v is negative", p.MaxIdleTime)
	}
	return nil
}

// apply sets p on db, field by field: a zero field leaves db's setting.
// The number of idle connections is set after the open limit, which
// would otherwise lower it.
func (p Pool) apply(db *sql.DB) {
	if p.MaxOpen > 0 {
		db.SetMaxOpenConns(p.MaxOpen)
	}
	if p.MaxIdle > 0 {
		db.SetMaxIdleConns(p.MaxIdle)
	}
	if p.MaxLifetime > 0 {
		db.SetConnMaxLifetime(p.MaxLifetime)
	}
	if p.MaxIdleTime > 0 {
		db.SetConnMaxIdleTime(p.MaxIdleTime)
	}
}

// connectionLimit returns how many connections the PostgreSQL server at
// db lets the current role open to the current database, and what sets
// that limit, in words. A superuser is bound by max_connections alone
// (PostgreSQL exempts it from the reserved slots and from CONNECTION
// LIMITs); another role by max_connections less superuser_reserved_connections
// and, from PostgreSQL 16, reserved_connections, and by its own and the
// database's CONNECTION LIMIT where set (-1: none).
func connectionLimit(ctx context.Context, db *sql.DB) (int, string, error) {
	var (
		maxConns, superReserved, reserved, roleLimit, dbLimit int
		super                                                 bool
	)
	err := db.QueryRowContext(ctx, `
		SELECT current_setting('max_connections')::int,
		       current_setting('superuser_reserved_connections')::int,
		       coalesce(current_setting('reserved_connections', true)::int, 0),
		       r.rolsuper, r.rolconnlimit, d.datconnlimit
		FROM pg_roles r, pg_database d
		WHERE r.rolname = current_user AND d.datname = current_database()`).
		Scan(&maxConns, &superReserved, &reserved, &super, &roleLimit, &dbLimit)
	if err != nil {
		return 0, "", fmt.Errorf("read the server's connection limits: %w", err)
	}
	if super {
		return maxConns, fmt.Sprintf("max_connections %d", maxConns), nil
	}
	limit := maxConns - superReserved - reserved
	why := fmt.Sprintf("max_connections %d less %d reserved: superuser_reserved_connections, reserved_connections", maxConns, superReserved+reserved)
	if roleLimit >= 0 && roleLimit < limit {
		limit, why = roleLimit, fmt.Sprintf("the role's CONNECTION LIMIT %d", roleLimit)
	}
	if dbLimit >= 0 && dbLimit < limit {
		limit, why = dbLimit, fmt.Sprintf("the database's CONNECTION LIMIT %d", dbLimit)
	}
	return limit, why, nil
}

// checkLimit refuses p when its MaxOpen is more than the server lets
// this role open (ErrPoolTooLarge). Other processes' connections are not
// counted: they come and go, and a pool opens its connections only as
// they are needed.
func (p Pool) checkLimit(ctx context.Context, db *sql.DB) error {
	if p.MaxOpen == 0 {
		return nil
	}
	limit, why, err := connectionLimit(ctx, db)
	if err != nil {
		return err
	}
	if p.MaxOpen > limit {
		return fmt.Errorf("%w: %d open connections, and the server lets this role open %d (%s)", ErrPoolTooLarge, p.MaxOpen, limit, why)
	}
	return nil
}
