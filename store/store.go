package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gofrs/flock"
	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq" // driver "postgres"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/rivermigrate"
	_ "modernc.org/sqlite" // driver "sqlite"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/migrations"
)

// ErrNotFound is returned when a requested record does not exist.
var ErrNotFound = errors.New("not found")

// ErrSchemaTooNew is returned by Open and Migrate when the database was
// migrated by a newer perfbot than this one.
var ErrSchemaTooNew = errors.New("database schema is newer than this perfbot")

// A Store is what perfbot keeps in its database. *DB implements it over
// PostgreSQL and over SQLite.
type Store interface {
	SaveRun(ctx context.Context, r *RunRecord) (int64, error)
	Runs(ctx context.Context, q RunQuery) ([]RunRecord, error)
	RunValues(ctx context.Context, q ValuesQuery) (map[string][]RunValue, error)
	Profiles(ctx context.Context, runIDs []int64) (map[int64][]analysis.Profile, error)
	History(ctx context.Context, q HistoryQuery) (map[analysis.Key][]float64, error)
	Trend(ctx context.Context, repo string, key analysis.Key, since time.Time) ([]TrendPoint, error)
	SaveComparison(ctx context.Context, c *Comparison) (int64, error)
	Comparison(ctx context.Context, id int64) (*Comparison, error)
	Close() error
}

var _ Store = (*DB)(nil)

// Options configure Open.
type Options struct {
	// Logger receives one line per applied migration; nil discards them.
	Logger *slog.Logger
	// ConnectTimeout bounds the first connection to a PostgreSQL server;
	// 0 means 5 seconds.
	ConnectTimeout time.Duration
	// NoMigrate leaves the schema as it is: the caller runs Migrate (as
	// perfbot migrate does, to report what it applied).
	NoMigrate bool
	// CreateDir creates a SQLite file's missing directory (and its
	// parents): for the default database, in the user data directory.
	CreateDir bool
	// Pool sizes a PostgreSQL database's connection pool, shared with
	// the job queue; the zero Pool keeps database/sql's defaults.
	// A MaxOpen above what the server allows is refused with
	// ErrPoolTooLarge.
	Pool Pool
}

// ErrBadLocation is the error of a SQLite path that cannot hold a
// database: its directory does not exist (and Options.CreateDir is not
// set), is not a directory, or is on a filesystem where no file can be
// created (/proc).
var ErrBadLocation = errors.New("no place for a database")

// sqliteDir checks, or with create makes, the directory of d's file.
func sqliteDir(d DSN, create bool) error {
	dir := filepath.Dir(d.Path)
	if create {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return fmt.Errorf("create directory: %w", err)
		}
		return nil
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: directory %s does not exist: create it first, or give a path in a directory that exists", ErrBadLocation, dir)
	case err != nil:
		return fmt.Errorf("directory %s: %w", dir, err)
	case !fi.IsDir():
		return fmt.Errorf("%w: %s is not a directory: give a path in a directory", ErrBadLocation, dir)
	}
	return nil
}

// A DB is an open perfbot database. It is safe for concurrent use.
type DB struct {
	db       *sqlx.DB
	dsn      DSN
	migrator *goose.Provider
	latest   int64 // the highest embedded migration version
}

// A Migration is one schema migration that Migrate applied.
type Migration struct {
	Version  int64
	Name     string // the file, e.g. "00001_init.sql", or "river/NAME" for the job queue's
	Duration time.Duration
}

var bindSQLite sync.Once

// Open opens the database at dsn (see ParseDSN), checks that it can be
// reached and, unless opts.NoMigrate is set, applies pending migrations.
// For SQLite it creates the file when missing, and its directory only with
// opts.CreateDir: a path someone typed whose directory is missing is a
// mistake (ErrBadLocation), not a directory to make.
func Open(ctx context.Context, dsn string, opts Options) (*DB, error) {
	d, err := ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	if d.Driver == DriverSQLite {
		// Opening a new file switches it to WAL, a switch that does not
		// wait on busy_timeout, and then migrates it: processes that open
		// the same file at once take turns (see lockSQLite).
		if err := sqliteDir(d, opts.CreateDir); err != nil {
			return nil, fmt.Errorf("open database %s: %w", d, err)
		}
		unlock, err := lockSQLite(ctx, d.Path)
		if err != nil {
			return nil, fmt.Errorf("open database %s: %w", d, err)
		}
		defer unlock()
	}
	db, err := open(ctx, d, opts)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", d, err)
	}
	if !opts.NoMigrate {
		if _, err := db.migrate(ctx); err != nil {
			db.Close()
			return nil, fmt.Errorf("open database %s: %w", d, err)
		}
	}
	return db, nil
}

func open(ctx context.Context, d DSN, opts Options) (*DB, error) {
	var (
		dialect goose.Dialect
		dir     string
		popts   = []goose.ProviderOption{goose.WithDisableGlobalRegistry(true)}
	)
	switch d.Driver {
	case DriverPostgres:
		dialect, dir = goose.DialectPostgres, migrations.Postgres
		// Several workers may start at once: one migrates, the others
		// wait for it (checking every second, for up to 5 minutes).
		locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 300))
		if err != nil {
			return nil, err
		}
		popts = append(popts, goose.WithSessionLocker(locker))
	case DriverSQLite:
		dialect, dir = goose.DialectSQLite3, migrations.SQLite
		bindSQLite.Do(func() { sqlx.BindDriver(DriverSQLite, sqlx.QUESTION) })
	default:
		return nil, fmt.Errorf("unknown driver %q", d.Driver)
	}
	if opts.Logger != nil {
		popts = append(popts, goose.WithSlog(opts.Logger))
	} else {
		popts = append(popts, goose.WithLogger(goose.NopLogger()))
	}

	pool := opts.Pool
	if d.Driver != DriverPostgres {
		pool = Pool{} // see Pool: SQLite keeps database/sql's defaults
	}
	if err := pool.check(); err != nil {
		return nil, err
	}
	sqldb, err := sqlx.Open(d.Driver, d.Source)
	if err != nil {
		return nil, err
	}
	pool.apply(sqldb.DB)
	timeout := opts.ConnectTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := sqldb.PingContext(pctx); err != nil {
		sqldb.Close()
		if d.Driver == DriverPostgres {
			return nil, fmt.Errorf("cannot connect to %s: %w (check --db or PERFBOT_DB)", d.host(), err)
		}
		return nil, err
	}
	if err := pool.checkLimit(pctx, sqldb.DB); err != nil {
		sqldb.Close()
		return nil, err
	}

	sub, err := fs.Sub(migrations.FS, dir)
	if err != nil {
		sqldb.Close()
		return nil, err
	}
	p, err := goose.NewProvider(dialect, sqldb.DB, sub, popts...)
	if err != nil {
		sqldb.Close()
		return nil, fmt.Errorf("migrations: %w", err)
	}
	srcs := p.ListSources()
	return &DB{db: sqldb, dsn: d, migrator: p, latest: srcs[len(srcs)-1].Version}, nil
}

// Close closes the database.
func (db *DB) Close() error { return db.db.Close() }

// String returns the database's address with any password hidden.
func (db *DB) String() string { return db.dsn.String() }

// Migrate applies the pending migrations and returns them, oldest first;
// none when the schema is up to date. A database migrated by a newer
// perfbot is refused with ErrSchemaTooNew.
func (db *DB) Migrate(ctx context.Context) ([]Migration, error) {
	if db.dsn.Driver == DriverSQLite {
		unlock, err := lockSQLite(ctx, db.dsn.Path)
		if err != nil {
			return nil, fmt.Errorf("migrate: %w", err)
		}
		defer unlock()
	}
	return db.migrate(ctx)
}

// migrate is Migrate for a caller that holds lockSQLite for SQLite (on
// PostgreSQL, goose's session lock serialises Up itself).
func (db *DB) migrate(ctx context.Context) ([]Migration, error) {
	current, err := db.migrator.GetDBVersion(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: schema version: %w", err)
	}
	if current > db.latest {
		return nil, fmt.Errorf("migrate: %w: the database is at schema version %d, this perfbot knows versions up to %d; upgrade perfbot",
			ErrSchemaTooNew, current, db.latest)
	}
	results, err := db.migrator.Up(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	applied := make([]Migration, 0, len(results))
	for _, r := range results {
		applied = append(applied, Migration{
			Version:  r.Source.Version,
			Name:     filepath.Base(r.Source.Path),
			Duration: r.Duration,
		})
	}
	if db.dsn.Driver == DriverPostgres {
		river, err := db.migrateQueue(ctx)
		if err != nil {
			return applied, fmt.Errorf("migrate: %w", err)
		}
		applied = append(applied, river...)
	}
	return applied, nil
}

// sqliteLockWait bounds how long lockSQLite waits for another process,
// as the PostgreSQL session lock does for migrations.
const sqliteLockWait = 5 * time.Minute

// lockSQLite takes an exclusive lock on the file PATH.lock (created if
// missing and left in place: removing a lock file while another process
// waits on it would let two in), waiting while another process holds it,
// and returns the function that releases it. Open holds it while it
// connects and migrates, Migrate while it migrates. Without it, processes
// opening a new database at once fail with "database is locked" (the
// switch to WAL does not wait on busy_timeout) or "table already exists"
// (goose has no lock for SQLite; two apply migration 1, and migration 5
// runs outside a transaction). The lock is a file of its own because
// closing any descriptor of the database file in a process drops SQLite's
// POSIX locks on it. A directory perfbot cannot write to gets no lock
// file; nor, then, can SQLite create its WAL there, so such a database
// only opens when its schema is up to date and WAL files exist already.
func lockSQLite(ctx context.Context, path string) (func(), error) {
	l := flock.New(path + ".lock")
	wctx, cancel := context.WithTimeout(ctx, sqliteLockWait)
	defer cancel()
	ok, err := l.TryLockContext(wctx, 20*time.Millisecond)
	switch {
	case ok:
		return func() { l.Unlock() }, nil
	case errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS):
		return func() {}, nil
	case ctx.Err() == nil && wctx.Err() != nil:
		// A lock dies with its process, so a live one holds it.
		return nil, fmt.Errorf("another perfbot process has held %s for %v (opening or migrating the database); wait for it to finish or stop it",
			l.Path(), sqliteLockWait)
	default:
		if errors.Is(err, fs.ErrNotExist) {
			// The directory exists (sqliteDir checked), yet a file
			// cannot be made in it: /proc, /sys.
			return nil, fmt.Errorf("%w: no file can be created in %s (creating the lock file %s: %v): give a path on an ordinary filesystem",
				ErrBadLocation, filepath.Dir(path), l.Path(), err)
		}
		return nil, fmt.Errorf("lock %s: %w", l.Path(), err)
	}
}

// riverLockKey is the PostgreSQL advisory lock that serialises River's
// migrations between processes starting at once (an arbitrary constant:
// "perfbot river" folded into 63 bits).
const riverLockKey = 0x7065_7266_6276_72

// migrateQueue applies River's migrations (its job tables, used by perfbot
// serve and perfbot worker), holding a session advisory lock so that
// processes starting at once apply them once. River runs each migration
// in its own transaction (one adds an enum value that the next uses, which
// PostgreSQL refuses inside one transaction). They are reported with a
// "river/" name prefix.
func (db *DB) migrateQueue(ctx context.Context) ([]Migration, error) {
	migrator, err := rivermigrate.New(riverdatabasesql.New(db.db.DB), &rivermigrate.Config{
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return nil, fmt.Errorf("job queue: %w", err)
	}
	conn, err := db.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("job queue: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, int64(riverLockKey)); err != nil {
		return nil, fmt.Errorf("job queue: lock: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(riverLockKey))
	res, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return nil, fmt.Errorf("job queue: %w", err)
	}
	var applied []Migration
	for _, v := range res.Versions {
		applied = append(applied, Migration{Version: int64(v.Version), Name: "river/" + v.Name, Duration: v.Duration})
	}
	for _, ix := range queueIndexes {
		start := time.Now()
		var exists bool
		if err := conn.QueryRowContext(ctx, `SELECT to_regclass($1) IS NOT NULL`, ix.name).Scan(&exists); err != nil {
			return applied, fmt.Errorf("job queue: index %s: %w", ix.name, err)
		}
		if exists {
			continue
		}
		if _, err := conn.ExecContext(ctx, ix.create); err != nil {
			return applied, fmt.Errorf("job queue: index %s: %w", ix.name, err)
		}
		applied = append(applied, Migration{Name: "queue/" + ix.name, Duration: time.Since(start)})
	}
	return applied, nil
}

// queueIndexes are perfbot's indexes on River's job table, made after
// River's migrations (whose tables they index): the job queue finds one
// pull request's comparisons and notes through them (store/queue) rather
// than scanning every job, which held a webhook's answer for 38 ms with
// 30k jobs stored. They are partial on a literal kind, so a query must
// say that kind literally to use them.
var queueIndexes = []struct{ name, create string }{
	{"perfbot_compare_by_pr", `CREATE INDEX IF NOT EXISTS perfbot_compare_by_pr ON river_job ((args->>'repo'), ((args->>'pr')::bigint)) WHERE kind = 'perfbot_compare'`},
	{"perfbot_notify_by_pr", `CREATE INDEX IF NOT EXISTS perfbot_notify_by_pr ON river_job ((args->>'repo'), ((args->>'pr')::bigint)) WHERE kind = 'perfbot_notify'`},
}

// SQL returns the database's connection pool, shared with the job queue.
func (db *DB) SQL() *sql.DB { return db.db.DB }

// Driver returns DriverPostgres or DriverSQLite.
func (db *DB) Driver() string { return db.dsn.Driver }

// SchemaVersion returns the database's schema version and the newest one
// this perfbot knows; they are equal once Migrate has run.
func (db *DB) SchemaVersion(ctx context.Context) (current, latest int64, err error) {
	current, err = db.migrator.GetDBVersion(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("schema version: %w", err)
	}
	return current, db.latest, nil
}

// RemoveUnusedSQLite removes the SQLite database at path (and its WAL,
// shared-memory and lock files) when nothing has been stored in it: no
// session, run, comparison or webhook delivery. It is for a command that
// created the file and then refused its input, so that a refusal leaves
// no database behind. It reports whether it removed the file; a database
// that holds anything is left as it is.
func RemoveUnusedSQLite(ctx context.Context, path string) (bool, error) {
	db, err := sqlx.Open(DriverSQLite, path)
	if err != nil {
		return false, err
	}
	for _, table := range []string{"sessions", "runs", "comparisons", "webhook_deliveries"} {
		var n int
		err := db.QueryRowContext(ctx, `SELECT count(*) FROM `+table).Scan(&n)
		if err != nil && !strings.Contains(err.Error(), "no such table") {
			db.Close()
			return false, fmt.Errorf("check %s for stored rows: %w", path, err)
		}
		if n > 0 {
			db.Close()
			return false, nil
		}
	}
	if err := db.Close(); err != nil {
		return false, err
	}
	for _, p := range []string{path, path + "-wal", path + "-shm", path + ".lock"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, err
		}
	}
	return true, nil
}
